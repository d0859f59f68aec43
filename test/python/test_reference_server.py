"""A test suite in another language against petstore-server, with Python's standard library only.

It starts the built CLI (`node dist/cli.js --port 0 --admin ...`), reads the URL it prints, and
drives the API and the admin API over plain HTTP, as a Python, Go or Java app's tests would.

    npm run build && python3 test/python/test_reference_server.py -v

NODE names the node binary (default: node on PATH).
"""

import json
import os
import re
import subprocess
import unittest
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = "py-test-key"


class ReferenceServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        node = os.environ.get("NODE", "node")
        cls.server = subprocess.Popen(
            [node, os.path.join(ROOT, "dist", "cli.js"), "--port", "0", "--admin", "--quiet",
             "--key", f"{KEY}:enterprise:3:100", "--pets", "5"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for line in cls.server.stdout:
            match = re.search(r"listening on (http://\S+)", line)
            if match:
                cls.api = match.group(1)
                cls.origin = cls.api[: -len("/v1")]
                break
        else:
            raise RuntimeError("petstore-server did not start: " + cls.server.stderr.read())

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait(timeout=10)
        cls.server.stdout.close()
        cls.server.stderr.close()

    def call(self, method, url, body=None, headers=None):
        """Sends one request; returns (status, headers, parsed JSON body or None)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status, head, text = response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            status, head, text = error.code, error.headers, error.read()
            error.close()
        return status, head, json.loads(text) if text else None

    def pets(self, method="GET", path="/pets", body=None, headers=None):
        return self.call(method, self.api + path, body, {"Authorization": f"Bearer {KEY}", **(headers or {})})

    def admin(self, method, path, body=None):
        return self.call(method, f"{self.origin}/_admin{path}", body)

    def setUp(self):
        status, _, _ = self.admin("POST", "/reset")
        self.assertEqual(status, 204)

    def test_list_answers_the_seed_pets_with_a_request_id(self):
        status, headers, pets = self.pets(path="/pets?limit=10")
        self.assertEqual(status, 200)
        self.assertEqual([pet["id"] for pet in pets], [1, 2, 3, 4, 5])
        self.assertRegex(headers["X-Request-Id"], r"^req_")

    def test_create_stores_a_pet_and_reset_forgets_it(self):
        status, headers, pet = self.pets("POST", body={"name": "Rex", "categoryId": 1})
        self.assertEqual(status, 201)
        self.assertEqual(pet, {"id": 6, "name": "Rex", "categoryId": 1})
        self.assertTrue(headers["Location"].endswith("/v1/pets/6"))
        self.admin("POST", "/reset")
        _, _, keys = self.admin("GET", "/keys")
        self.assertEqual(keys, {"petCount": 5, "keys": {}})

    def test_the_fourth_request_in_a_minute_is_a_429_until_the_clock_moves(self):
        # At the start of a minute, so the four requests cannot straddle two windows.
        self.assertEqual(self.admin("POST", "/clock", {"set": "2027-01-01T00:00:00Z"})[0], 200)
        for _ in range(3):
            self.assertEqual(self.pets()[0], 200)
        status, headers, record = self.pets()
        self.assertEqual(status, 429)
        self.assertEqual(record["code"], "rate_limited")
        self.assertGreaterEqual(int(headers["Retry-After"]), 1)
        status, _, clock = self.admin("POST", "/clock", {"advanceMs": 60_000})
        self.assertEqual(status, 200)
        self.assertIn("now", clock)
        self.assertEqual(self.pets()[0], 200)

    def test_the_admin_api_reports_counters_and_the_journal_without_the_key(self):
        self.pets()
        self.pets(path="/pets?status=sold")
        _, _, keys = self.admin("GET", "/keys")
        (label, counters), = keys["keys"].items()
        self.assertNotIn(KEY, label)
        self.assertEqual(counters["requests"], 2)
        _, _, journal = self.admin("GET", "/requests")
        self.assertEqual([entry["path"] for entry in journal], ["/v1/pets", "/v1/pets?status=sold"])
        self.assertEqual(journal[0]["key"], label)
        self.assertFalse(journal[0]["insideRetryAfter"])
        self.assertEqual(self.admin("DELETE", "/requests")[0], 204)
        self.assertEqual(self.admin("GET", "/requests")[2], [])

    def test_a_bad_clock_body_answers_a_400_error_record(self):
        status, _, record = self.admin("POST", "/clock", {"advanceMs": "soon"})
        self.assertEqual(status, 400)
        self.assertEqual(record["status"], 400)
        self.assertEqual(record["code"], "invalid_body")

    def test_prefer_forces_an_answer_and_changes_nothing(self):
        status, headers, record = self.pets("POST", body={"name": "Rex", "categoryId": 1}, headers={"Prefer": "code=503"})
        self.assertEqual(status, 503)
        self.assertEqual(record["code"], "service_unavailable")
        _, _, keys = self.admin("GET", "/keys")
        self.assertEqual(keys, {"petCount": 5, "keys": {}})


if __name__ == "__main__":
    unittest.main()
