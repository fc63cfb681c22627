// The machine's ceiling: a bare Bun.serve TLS endpoint returning a small JSON body, with the
// same certificate type as warden. Prints its port, then serves until killed.
import { loadTls } from "../../src/http/tls.ts";

const tls = await loadTls({ dataDir: process.argv[2] ?? "./data", log: () => {} });
const body = JSON.stringify({ ok: true, decision: "ALLOWED" });
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  tls: { cert: tls.cert, key: tls.key },
  fetch: () => new Response(body, { headers: { "content-type": "application/json" } }),
});
console.log(server.port);
