// Who is calling: a customer with a JWT, or a bot with an API key (spec section 5).
import type { Session } from "../accounts/sessions.ts";
import { authenticateKey, type KeyPrincipal } from "../keys/authenticate.ts";
import type { Deps } from "./deps.ts";
import { AppError } from "./errors.ts";

export type Principal = (KeyPrincipal & { via: "key" }) | (Session & { via: "jwt" });

function bearerToken(request: Request): string | undefined {
  const header = request.headers.get("authorization");
  if (!header) return undefined;
  const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(header.trim());
  if (!match) throw new AppError("unauthorized");
  return match[1];
}

export async function requireCustomer(deps: Deps, request: Request): Promise<Session> {
  const token = bearerToken(request);
  if (!token) throw new AppError("unauthorized", "Send Authorization: Bearer <token>.");
  return deps.sessions.authenticate(token);
}

// Only the header counts: a key in a query string would end up in proxy and browser logs.
export async function requireKey(deps: Deps, request: Request): Promise<KeyPrincipal> {
  const secret = request.headers.get("x-api-key");
  if (!secret) throw new AppError("unauthorized", "Send X-API-Key: <key>.");
  return authenticateKey(deps.db, secret.trim());
}

/** Either credential; an API key wins when both are sent. */
export async function requireKeyOrCustomer(deps: Deps, request: Request): Promise<Principal> {
  if (request.headers.has("x-api-key")) return { ...(await requireKey(deps, request)), via: "key" };
  if (request.headers.has("authorization")) return { ...(await requireCustomer(deps, request)), via: "jwt" };
  throw new AppError("unauthorized", "Send X-API-Key: <key> or Authorization: Bearer <token>.");
}
