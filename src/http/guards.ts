// The two guards every route uses (docs/architecture.md, "How a route guards itself"): one named
// plugin each, whose macro a route turns on with a flag, `{ session: true }` or `{ apiKey: true }`.
// The check runs in the transform phase, before Elysia validates the body: without a credential
// the answer is 401, never 400 (docs/api.md, "Error codes"). Its result is handed to the handler by the
// macro's resolve, so the caller is resolved once per request. This folder is a leaf: the session
// reader and the key authenticator come in as parameters.
import { Elysia } from "elysia";

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
