// The MCP commands' calls of warden (WARDEN_URL, WARDEN_API_KEY): unlike the CLI's one-shot
// client (src/cli/client.ts) they never end the process; they tell an answer, a refusal (an
// error body of the service) and "out of reach" apart, because the gateway fails closed on the last.
// The command line (src/cli/mcp.ts) hands in where warden is and how to reach it.

export type WardenReply =
  | { kind: "ok"; status: number; body: Record<string, any> }
  /** The service answered with an error body (docs/api.md, Error codes). */
  | { kind: "refused"; status: number; body: Record<string, any> }
  /** No answer: the network, a timeout, a 5xx, or something that is not warden's JSON. */
  | { kind: "unreachable"; message: string };

export interface Warden {
  url: string;
  call(method: "GET" | "POST", path: string, body?: unknown, timeoutMs?: number): Promise<WardenReply>;
}

/** warden at `url` (no trailing slash), called with `apiKey` and the fetch options in `init`. */
export function createWarden(url: string, apiKey: string, init: RequestInit): Warden {
  return {
    url,
    async call(method, path, body, timeoutMs = 15_000) {
      const headers: Record<string, string> = { "x-api-key": apiKey };
      if (body !== undefined) headers["content-type"] = "application/json";
      let res: Response;
      try {
        res = await fetch(url + path, { ...init, method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
      } catch (err) {
        return { kind: "unreachable", message: `cannot reach ${url}: ${(err as Error).message}` };
      }
      let parsed: unknown;
      try {
        parsed = await res.json();
      } catch {
        return { kind: "unreachable", message: `${method} ${path} on ${url}: HTTP ${res.status}, not warden's JSON` };
      }
      const json = (parsed ?? {}) as Record<string, any>;
      if (res.status >= 500) return { kind: "unreachable", message: `${method} ${path} on ${url}: HTTP ${res.status} ${json.error ?? ""}`.trim() };
      if (res.ok && json.ok === true) return { kind: "ok", status: res.status, body: json };
      return { kind: "refused", status: res.status, body: json };
    },
  };
}

/** One line for a refusal: `HTTP 403 decision_denied: message`. */
export function describeRefusal(reply: Extract<WardenReply, { kind: "refused" }>): string {
  const { error, message } = reply.body;
  return `HTTP ${reply.status} ${error ?? "error"}${message ? `: ${message}` : ""}`;
}
