// The console's only way to the server: the public JSON API (docs/api.md), same origin.
// The session token lives in sessionStorage (this tab only, gone when it closes), never a cookie.
const TOKEN = "warden.session";

export function sessionToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN);
  } catch {
    return null;
  }
}

export function setSessionToken(token: string | null): void {
  try {
    if (token) sessionStorage.setItem(TOKEN, token);
    else sessionStorage.removeItem(TOKEN);
  } catch {
    // Storage disabled: the session lasts as long as the page.
  }
  for (const listener of listeners) listener(token);
}

const listeners = new Set<(token: string | null) => void>();
export function onSessionChange(listener: (token: string | null) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** A refusal in the error body (docs/api.md, Error codes): `error` is the code, `body` has any extra fields. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }
  get requestId(): string | undefined {
    return typeof this.body.request_id === "string" ? this.body.request_id : undefined;
  }
}

export interface CallOptions {
  json?: unknown;
  /** Send the session token (default true). */
  auth?: boolean;
  /** Idempotency-Key for a POST that creates or changes something: one per user action. */
  idempotencyKey?: string;
}

export async function api<T = Record<string, any>>(method: string, path: string, opts: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  const token = opts.auth === false ? null : sessionToken();
  if (token) headers.authorization = `Bearer ${token}`;
  if (opts.json !== undefined) headers["content-type"] = "application/json";
  if (opts.idempotencyKey) headers["idempotency-key"] = opts.idempotencyKey;
  const send = () => fetch(path, { method, headers, body: opts.json === undefined ? undefined : JSON.stringify(opts.json), credentials: "omit", cache: "no-store" });
  let response: Response;
  try {
    response = await send();
  } catch {
    // The answer was lost: with an Idempotency-Key one retry is safe (the server replays the
    // first outcome instead of acting twice); without one, the person decides.
    try {
      if (!opts.idempotencyKey) throw new Error("not retried");
      await new Promise((resolve) => setTimeout(resolve, 500));
      response = await send();
    } catch {
      throw new ApiError(0, "network_error", "Could not reach warden. Check your connection and try again.");
    }
  }
  let body: any;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  if (response.ok && body?.ok !== false) return body as T;
  return Promise.reject(refusal(response, body, token, path));
}

/** A GET whose answer is a file (an export): its bytes and the name the server gives it. */
export async function download(path: string): Promise<{ name: string | undefined; body: Blob }> {
  const token = sessionToken();
  let response: Response;
  try {
    response = await fetch(path, { headers: token ? { authorization: `Bearer ${token}` } : {}, credentials: "omit", cache: "no-store" });
  } catch {
    throw new ApiError(0, "network_error", "Could not reach warden. Check your connection and try again.");
  }
  if (!response.ok) throw refusal(response, await response.json().catch(() => undefined), token, path);
  const name = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "")?.[1];
  return { name, body: await response.blob() };
}

function refusal(response: Response, body: any, token: string | null, path: string): ApiError {
  const code = typeof body?.error === "string" ? body.error : "internal_error";
  const message = typeof body?.message === "string" ? body.message : `The server answered ${response.status}.`;
  const error = new ApiError(response.status, code, message, body ?? {});
  // An ended or expired session: back to the login page (a wrong current password or code is
  // also 401, but only on the password and second-factor forms, which handle it themselves).
  if (response.status === 401 && token && !/^\/customer\/account\/(password|mfa\/)/.test(path)) setSessionToken(null);
  return error;
}

export const newIdempotencyKey = (): string => crypto.randomUUID();
