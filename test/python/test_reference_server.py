"""A test suite in another language against the petstore-server CLI, with Python's standard
library only: how a Python, Go or Java team uses the reference server as a fixture.

Run: PETSTORE_SERVER="node dist/cli.js" python3 test/python/test_reference_server.py
"""
import datetime
import json
import os
import re
import shlex
import subprocess
import unittest
import urllib.error
import urllib.request

KEY = "py-test-key"


class ReferenceServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        command = shlex.split(os.environ.get("PETSTORE_SERVER", "npx petstore-server"))
        cls.process = subprocess.Popen(
            command + ["--port", "0", "--admin", "--quiet", "--key", KEY + ":enterprise:2:100"],
            stdout=subprocess.PIPE,
            text=True,
        )
        # The banner is the first line, after "Generating N pets…" from --pets 500000 on: read
        # lines until it comes, or until the process ends (it printed why on stderr).
        line, match = "", None
        while not match:
            line = cls.process.stdout.readline()
            if not line:
                cls.process.kill()
                raise RuntimeError("petstore-server did not start")
            match = re.search(r"listening on (http://\S+)", line)
        cls.api = match.group(1)
        cls.root = cls.api[: -len("/v1")]

    @classmethod
    def tearDownClass(cls):
        cls.process.terminate()
        cls.process.wait(timeout=10)
        cls.process.stdout.close()

    def setUp(self):
        # A reset leaves the clock where a test moved it: set it back to the real time too.
        self.admin("POST", "reset")
        self.admin("POST", "clock", {"set": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")})

    def call(self, method, path, body=None, headers=None):
        request = urllib.request.Request(self.api + path, method=method, data=None if body is None else json.dumps(body).encode())
        request.add_header("Authorization", "Bearer " + KEY)
        if body is not None:
            request.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, dict(response.headers), json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), json.loads(error.read() or b"null")

    def admin(self, method, path, body=None):
        request = urllib.request.Request(self.root + "/_admin/" + path, method=method, data=None if body is None else json.dumps(body).encode())
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def test_create_then_list(self):
        status, headers, pet = self.call("POST", "/pets", {"name": "Rex", "categoryId": 1})
        self.assertEqual(status, 201)
        self.assertEqual(pet["name"], "Rex")
        self.assertRegex(headers["X-Request-Id"], r"^[0-9a-f]{16}$")
        status, _, pets = self.call("GET", "/pets")
        self.assertEqual((status, [p["name"] for p in pets]), (200, ["Rex"]))

    def test_rate_limit_then_skip_the_window_with_the_clock(self):
        # At the start of a minute, so the three requests cannot straddle two windows.
        self.admin("POST", "clock", {"set": "2027-01-01T00:00:00Z"})
        self.call("GET", "/pets")
        self.call("GET", "/pets")
        status, headers, record = self.call("GET", "/pets")
        self.assertEqual((status, record["code"]), (429, "rate_limited"))
        self.assertIn("Retry-After", headers)
        self.admin("POST", "clock", {"advanceMs": 60000})
        self.assertEqual(self.call("GET", "/pets")[0], 200)

    def test_sunset_get_pet_is_gone_once_the_clock_passes_it(self):
        self.admin("POST", "clock", {"set": "2030-12-05T00:00:00Z"})
        _, _, pet = self.call("POST", "/pets", {"name": "Rex", "categoryId": 1})
        status, headers, record = self.call("GET", "/pets/%d" % pet["id"])
        self.assertEqual((status, record["code"]), (410, "gone"))
        self.assertEqual(headers["Sunset"], "Thu, 05 Dec 2030 00:00:00 GMT")

    def test_the_deprecated_get_pet_answers_with_its_sunset_on_the_clock_setup_restored(self):
        # Runs after the test above: the clock it moved past the sunset is back to the real time.
        _, _, pet = self.call("POST", "/pets", {"name": "Rex", "categoryId": 1})
        status, headers, found = self.call("GET", "/pets/%d" % pet["id"])
        self.assertEqual((status, found), (200, pet))
        self.assertEqual((headers["Deprecation"], headers["Sunset"]), ("@1767225600", "Thu, 05 Dec 2030 00:00:00 GMT"))

    def test_forced_answers_change_nothing(self):
        status, _, record = self.call("POST", "/pets", {"name": "Rex", "categoryId": 1}, {"Prefer": "code=503"})
        self.assertEqual((status, record["code"]), (503, "service_unavailable"))
        self.assertEqual(self.call("GET", "/pets")[2], [])

    def test_admin_shows_keys_by_label_and_the_journal(self):
        self.call("GET", "/pets")
        keys = self.admin("GET", "keys")["keys"]
        self.assertEqual(list(keys), ["py-t\u2026"])
        self.assertEqual(keys["py-t\u2026"]["requests"], 1)
        journal = self.admin("GET", "requests")["requests"]
        self.assertEqual([(r["method"], r["path"], r["status"]) for r in journal], [("GET", "/v1/pets", 200)])
        self.assertNotIn(KEY, json.dumps(journal))


if __name__ == "__main__":
    unittest.main()
