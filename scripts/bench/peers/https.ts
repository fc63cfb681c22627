// The minimal HTTPS server the peers bench puts in front of a library (Cedar, Casbin): POST /check
// with {principal, input} (a key id and a warden protect input) answers {decision}. The same TLS
// as warden and the bench's ceiling (a development certificate in the directory given). Prints
// {port, version} as a line of JSON, then serves until killed.
import { loadTls } from "../../../src/http/tls.ts";

type Input = { action: string; resource?: string; amount?: unknown; currency?: unknown };

export async function serveDecisions(tlsDir: string, version: string, decide: (principal: string, input: Input) => boolean | Promise<boolean>): Promise<void> {
  const tls = await loadTls({ dataDir: tlsDir, log: () => {} });
  const allowed = JSON.stringify({ decision: "ALLOWED" });
  const denied = JSON.stringify({ decision: "DENIED" });
  const headers = { "content-type": "application/json" };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert: tls.cert, key: tls.key },
    async fetch(request) {
      if (request.method !== "POST" || new URL(request.url).pathname !== "/check") return new Response("not found", { status: 404 });
      try {
        const { principal, input } = (await request.json()) as { principal: string; input: Input };
        return new Response((await decide(principal, input)) ? allowed : denied, { headers });
      } catch (err) {
        return Response.json({ error: String(err) }, { status: 500 });
      }
    },
  });
  console.log(JSON.stringify({ port: server.port, version }));
}
