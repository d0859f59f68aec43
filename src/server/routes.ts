/**
 * The API's routes and their handlers. Handlers see only what they need (the request, the path
 * below `/v1`, the clock, the store); authentication, rate limits, HEAD and faults happen around
 * them, in server.ts.
 *
 * @module
 */
import { clip } from '../redact.js';
import { check, GET_PET_SUNSET, LIST_LIMIT, ListPetsQuerySchema, PET_STATUSES } from '../schemas/index.js';
import { allowList, error, json, jsonText, readJson, type Incoming, type Reply } from './http.js';
import { openApiDocument } from './openapi.js';
import { ServerNewPetSchema } from './rules.js';
import type { PetStore } from './store.js';

/** `Deprecation` (RFC 9745) date of `GET /pets/{petId}`: when API version 1.0.0 marked it. */
export const GET_PET_DEPRECATED_AT = /* @__PURE__ */ new Date(/* @__PURE__ */ Date.UTC(2026, 0, 1));

const SUNSET_HTTP_DATE = /* @__PURE__ */ GET_PET_SUNSET.toUTCString();

/** What a handler is given. */
interface RouteContext {
  request: Incoming;
  /** The path below `/v1`, without a trailing slash, e.g. `/pets/3`. */
  path: string;
  /** The route pattern's captures. */
  params: string[];
  now: number;
  store: PetStore;
  /** The orders' JSON text. */
  orders: string;
}

type Handler = (ctx: RouteContext) => Reply | Promise<Reply>;

/** A route: the methods it answers (HEAD is dispatched as GET by the server) and whether it needs a key. */
interface Route {
  pattern: RegExp;
  methods: Readonly<Record<string, Handler>>;
  /** Answered without an API key. */
  public?: boolean;
}

/** A route matched against a request's path, with its captures: matched once, then reused. */
export interface RouteMatch {
  route: Route;
  /** The path below `/v1`, without a trailing slash. */
  path: string;
  params: string[];
}

function listPets({ request, store }: RouteContext): Reply {
  const raw: Record<string, unknown> = {};
  for (const name of ['limit', 'status'] as const) {
    const values = request.url.searchParams.getAll(name);
    if (values.length > 1) return error(400, 'invalid_query', `The query parameter ${name} is given ${values.length} times; give it once.`);
    if (values.length === 1) raw[name] = values[0];
  }
  if (raw.limit !== undefined) {
    const text = String(raw.limit);
    // Plain decimal integers only: `0x10`, `1e2`, ` 5` and `1.0` are not page sizes anyone meant,
    // and `1.9999999999999999` would round to 2. Anything else stays a string, which the schema refuses.
    raw.limit = /^-?\d+$/.test(text) ? Number(text) : text;
  }
  const query = check(ListPetsQuerySchema, raw, 'query');
  if (!query.success) {
    return error(
      400,
      'invalid_query',
      `${query.message}. limit is an integer from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}; status is one of ${PET_STATUSES.join(', ')}.`,
    );
  }
  return jsonText(store.listJson(query.data.limit ?? LIST_LIMIT.default, query.data.status));
}

async function createPet({ request, store }: RouteContext): Promise<Reply> {
  const type = request.header('Content-Type');
  const mediaType = type?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== 'application/json' && !/^application\/[^/]+\+json$/.test(mediaType)) {
    return error(
      415,
      'unsupported_media_type',
      `The body must be JSON, sent with Content-Type: application/json${type ? `; got "${clip(type, 100)}"` : ', which is missing'}.`,
    );
  }
  const read = await readJson(request, 'Send a NewPet object such as {"name":"Rex","categoryId":1}.');
  if ('error' in read) return read.error;
  const pet = check(ServerNewPetSchema, read.body, 'body');
  if (!pet.success) return error(400, 'invalid_body', `Invalid NewPet: ${pet.message}.`);
  const created = store.add(pet.data);
  if (!created) {
    return error(
      409,
      'ids_exhausted',
      `No id is left for a new pet: ids are safe integers, at most ${Number.MAX_SAFE_INTEGER} (2^53 − 1), and that one is taken. Seed pets with smaller ids.`,
    );
  }
  return json(created, 201, { Location: `${apiBase(request.url)}/pets/${created.id}` });
}

/** The int64 range of the spec's identifiers. */
const INT64 = { min: -9_223_372_036_854_775_808n, max: 9_223_372_036_854_775_807n } as const;

/**
 * Whether `text` is an int64 (the spec's petId, whatever its sign) in its one decimal spelling: no
 * leading zeros, no `+`, no `-0`, so one pet has one URL. Only safe integers exist in the store;
 * the rest of the range is valid and simply held by no pet.
 */
function isInt64(text: string): boolean {
  if (!/^(0|-?[1-9]\d{0,18})$/.test(text)) return false;
  const value = BigInt(text);
  return value >= INT64.min && value <= INT64.max;
}

function getPet({ request: { url }, params, now, store }: RouteContext): Reply {
  const headers = {
    Deprecation: `@${Math.floor(GET_PET_DEPRECATED_AT.getTime() / 1000)}`,
    Sunset: SUNSET_HTTP_DATE,
    Link: `<${apiBase(url)}/pets>; rel="successor-version"`,
  };
  if (now >= GET_PET_SUNSET.getTime()) {
    return error(410, 'gone', `GET /pets/{petId} was removed on ${SUNSET_HTTP_DATE}. Use GET /pets with the status filter.`, headers);
  }
  // Read as RFC 3986 reads it (`%35` is `5`); what is checked, and shown, is the decoded value.
  const id = decodeSafe(params[0] ?? '');
  if (!isInt64(id)) {
    return error(
      400,
      'invalid_pet_id',
      `petId must be an int64 in decimal, from ${INT64.min} to ${INT64.max}, without leading zeros or a sign on 0; got "${clip(id, 40)}".`,
      headers,
    );
  }
  const pet = Number.isSafeInteger(Number(id)) ? store.get(Number(id)) : undefined;
  if (!pet) return error(404, 'not_found', `No pet has id ${id}.`, headers);
  return json(pet, 200, headers);
}

const ROUTES: readonly Route[] = [
  { pattern: /^\/pets$/, methods: { GET: listPets, POST: createPet } },
  { pattern: /^\/pets\/([^/]*)$/, methods: { GET: getPet } },
  { pattern: /^\/store\/orders$/, methods: { GET: ({ orders }) => jsonText(orders) } },
  // Its server is the base path it was fetched under (a proxy's `/api/v1`), relative to the host.
  { pattern: /^\/openapi\.json$/, methods: { GET: ({ request: { url } }) => json({ ...openApiDocument(), servers: [{ url: apiBase(url).slice(url.origin.length) }] }) }, public: true },
];

/** The API's paths, for messages that point callers at them. */
export const API_PATHS = '/v1/pets, /v1/pets/{petId} and /v1/store/orders';

/**
 * The segments of `pathname` and the index of the `v1` the API is under, or -1 when it is outside
 * `/v1`: the first `v1`, unless a later one is followed by a route (a prefix may hold a `v1` of its
 * own: a proxy's `/v1/proxy/v1`). A prefix before `/v1` is made of named segments: one with an
 * empty segment (`//evil.example/v1`, `//v1`) is no place the API is mounted, and a `Location`
 * built on it would read as another host.
 */
function v1Segments(pathname: string): [segments: string[], v1: number] {
  const segments = pathname.split('/');
  let v1 = segments.indexOf('v1');
  for (let later = v1; (later = segments.indexOf('v1', later + 1)) > 0; ) {
    if (!matchRoute(below(segments, v1)) && matchRoute(below(segments, later))) v1 = later;
  }
  return [segments, v1 > 0 && segments.slice(1, v1).includes('') ? -1 : v1];
}

/**
 * The path below the first `/v1` segment of `pathname` (any host, any prefix), without a trailing
 * slash; `undefined` when the path is outside `/v1`.
 */
export function apiPath(pathname: string): string | undefined {
  const [segments, v1] = v1Segments(pathname);
  return v1 < 0 ? undefined : below(segments, v1);
}

/** The path below the segment at `index`, without a trailing slash. */
function below(segments: string[], index: number): string {
  const path = '/' + segments.slice(index + 1).join('/');
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/**
 * The API's base URL as the request reached it, up to and including its first `/v1` segment,
 * whatever follows (a trailing slash included): what `Location` and `Link` answers build on.
 */
function apiBase(url: URL): string {
  const [segments, v1] = v1Segments(url.pathname);
  return url.origin + segments.slice(0, v1 + 1).join('/');
}

/** Matches a path below `/v1` against the routes, once. */
export function matchRoute(path: string): RouteMatch | undefined {
  for (const route of ROUTES) {
    const match = route.pattern.exec(path);
    if (match) return { route, path, params: match.slice(1) };
  }
  return undefined;
}

/** The methods a route allows, as `Allow` lists them: its own, HEAD wherever GET is, and OPTIONS. */
export function allowed(route: Route | undefined): string {
  return allowList(route ? Object.keys(route.methods) : ['GET', 'POST']);
}

/** Runs the handler of `method` (HEAD already dispatched as GET), or `undefined` when the route has none. */
export function dispatch(
  match: RouteMatch,
  method: string,
  request: Incoming,
  now: number,
  state: { store: PetStore; orders: string },
): Reply | Promise<Reply> | undefined {
  const handler = match.route.methods[method];
  return handler?.({ request, path: match.path, params: match.params, now, store: state.store, orders: state.orders });
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
