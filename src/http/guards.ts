// The guards every route uses (docs/architecture.md, "How a route guards itself"): one named plugin
// each, whose macro a route turns on with a flag, `{ session: true }`, `{ apiKey: true }` or, for a
// route either caller may use, `{ keyOrSession: true }`.
// The check runs in the transform phase, before Elysia validates the body: without a credential
// the answer is 401, never 400 (docs/api.md, "Error codes"). Its result is handed to the handler by the
// macro's resolve, so the caller is resolved once per request. This folder is a leaf: the session
// reader and the key authenticator come in as parameters.
import { Elysia } from "elysia";
import { AppError } from "./errors.ts";

/** Reads the customer's session from a request, or throws the 401 (src/accounts/sessions.ts). */
export interface SessionReader<Session> {
  require(request: Request, route: string): Promise<Session>;
}

/** Reads the API key's principal from a request, or throws the 401 (src/keys/authenticate.ts). */
export interface KeyReader<Principal> {
  require(request: Request, opts?: { bearer?: boolean }): Promise<Principal>;
}

/** `{ session: true }`: the route's handler gets `customer`, the signed-in person's session. */
export function sessionGuard<Session>(sessions: SessionReader<Session>) {
  const seen = new WeakMap<Request, Session>();
  return new Elysia({ name: "guard-session" }).macro({
    session: {
      async transform({ request, route }) {
        seen.set(request, await sessions.require(request, route));
      },
      resolve: ({ request }) => ({ customer: seen.get(request)! }),
    },
  });
}

/**
 * `{ apiKey: true }`: the route's handler gets `principal`, the key's tenant and grants;
 * `{ apiKey: "bearer" }` also takes the key as an `Authorization: Bearer` token.
 */
export function apiKeyGuard<Principal>(keys: KeyReader<Principal>) {
  const seen = new WeakMap<Request, Principal>();
  return new Elysia({ name: "guard-api-key" }).macro({
    apiKey: (how: true | "bearer") => ({
      async transform({ request }) {
        seen.set(request, await keys.require(request, { bearer: how === "bearer" }));
      },
      resolve: ({ request }) => ({ principal: seen.get(request)! }),
    }),
  });
}

/** Who called a route that takes either credential: the key's principal or the person's session. */
export type KeyOrSession<Principal, Session> = { key: Principal; session?: undefined } | { key?: undefined; session: Session };

/**
 * `{ keyOrSession: true }`: the route's handler gets `caller`, an API key's principal (`X-API-Key`)
 * or a session (`Authorization: Bearer`); a key wins when both are sent, and neither is a 401.
 */
export function keyOrSessionGuard<Principal, Session>(keys: KeyReader<Principal>, sessions: SessionReader<Session>) {
  const seen = new WeakMap<Request, KeyOrSession<Principal, Session>>();
  const callerOf = async (request: Request, route: string): Promise<KeyOrSession<Principal, Session>> => {
    if (request.headers.has("x-api-key")) return { key: await keys.require(request) };
    if (request.headers.has("authorization")) return { session: await sessions.require(request, route) };
    throw new AppError("unauthorized", "Send X-API-Key: <key> or Authorization: Bearer <token>.");
  };
  return new Elysia({ name: "guard-key-or-session" }).macro({
    keyOrSession: {
      async transform({ request, route }) {
        seen.set(request, await callerOf(request, route));
      },
      resolve: ({ request }) => ({ caller: seen.get(request)! }),
    },
  });
}
