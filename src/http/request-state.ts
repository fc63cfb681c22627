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
