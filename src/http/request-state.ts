// What the front door learns about a request (its id, when it arrived, the matched route),
// kept beside the Request object so handlers and the error mapper can reach it.
import { newId } from "../ids.ts";

export interface RequestState {
  id: string;
  /** The caller's X-Request-ID was accepted (or none was sent). */
  started: number;
  route?: string;
  /** The client's address as the front door resolved it (src/http/client-address.ts); unset in-process. */
  ip?: string;
  /** The authenticated caller, for the log line: set where a key or session is accepted. */
  tenantId?: string;
  keyId?: string;
  /** The error the response carries, for the front door's counts (auth failures, quota refusals). */
  failure?: { code: string; limit?: unknown };
}

const states = new WeakMap<Request, RequestState>();

export function attachState(request: Request, state: RequestState): void {
  states.set(request, state);
}

export function requestState(request: Request): RequestState {
  let state = states.get(request);
  if (!state) {
    state = { id: newId("req_"), started: performance.now() };
    states.set(request, state);
  }
  return state;
}

export function requestId(request: Request): string {
  return requestState(request).id;
}

/** Notes who made the request (an API key's tenant and key, or a session's tenant) for its log line. */
export function noteCaller(request: Request, tenantId: string, keyId?: string): void {
  const state = requestState(request);
  state.tenantId = tenantId;
  if (keyId !== undefined) state.keyId = keyId;
}
