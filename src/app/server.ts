// Serves the app over HTTPS (contract section 9). Behind a TLS-terminating proxy
// (TRUST_PROXY=1, no certificate configured) it listens on plain HTTP and the front door accepts
// only requests the proxy marks with X-Forwarded-Proto: https.
import type { Config } from "../config.ts";
import { createService } from "./service.ts";
import { loadTls } from "../http/tls.ts";
import { listen, type Listener } from "../runtime.ts";

/** How long a graceful stop (SIGTERM) waits for requests in flight before cutting them off. */
const DRAIN_MS = 25_000;

/** Options pass through to createService (tests hand in their database, log and clock). */
export async function serve(config: Config, opts: Parameters<typeof createService>[1] = {}) {
  const service = await createService(config, opts);
  const { log } = service.deps;
  const plain = config.trustProxy && !config.tlsCert;
  const tls = plain ? undefined : await loadTls({ dataDir: config.dataDir, certFile: config.tlsCert, keyFile: config.tlsKey, log: log.info });
  const server = listen({
    port: config.port,
    hostname: config.host,
    tls: tls ? { cert: tls.cert, key: tls.key } : undefined,
    // No limit of Bun's own: above one it answers an empty 413 (or cuts the connection) instead
    // of the contract's; the front door refuses a declared length over 64 KiB before reading,
    // and stops reading an undeclared one there.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    // The peer address feeds brute-force limits and security events (src/http/client-address.ts);
    // asked for only when one of them reads it, while the request is still open.
    fetch: (request: Request, server: Listener) => service.handle(request, { ip: () => server.requestIP(request)?.address }),
  });
  const url = `${plain ? "http" : "https"}://${config.host.includes(":") ? `[${config.host}]` : config.host}:${server.port}`;
  log.info("listening", { url, database: service.deps.db.kind, tls: tls?.source ?? "proxy" });
  const stop = async () => {
    // Stop accepting; requests in flight finish (for at most DRAIN_MS), and only then does the
    // database close under them.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const drained = await Promise.race([
      server.stop().then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), DRAIN_MS))),
    ]);
    clearTimeout(timer);
    if (!drained) await server.stop(true);
    await service.close();
  };
  return { server, service, url, stop };
}
