// Serves the app over HTTPS (docs/api.md; docs/deployment.md). Behind a TLS-terminating proxy
// (TRUST_PROXY=1, no certificate configured) it listens on plain HTTP and the front door accepts
// only requests the proxy marks with X-Forwarded-Proto: https.
import type { Config } from "../config.ts";
import { createService, type Service } from "./service.ts";
import { loadTls } from "../http/tls.ts";
import { listen, type Listener } from "../runtime.ts";
import { randomBase62 } from "../ids.ts";
import { metricsEndpoint } from "../observability/endpoint.ts";
import { startOpsChannel } from "../ops/channel.ts";
import { fileOutboxDir } from "../mail/transport.ts";

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
    // of the one docs/api.md names; the front door refuses a declared length over 64 KiB before reading,
    // and stops reading an undeclared one there.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    // The peer address feeds brute-force limits and security events (src/http/client-address.ts);
    // asked for only when one of them reads it, while the request is still open.
    fetch: (request: Request, server: Listener) => service.handle(request, { ip: () => server.requestIP(request)?.address }),
  });
  const url = `${plain ? "http" : "https"}://${hostPart(config.host)}:${server.port}`;
  const metrics = await listenMetrics(config, service, server);
  // One id per start, to tell this process's lines from another instance's or an earlier run's.
  const instanceId = `inst_${randomBase62(16)}`;
  // The addresses a person opens first, so the start-up line is all they need to read.
  log.info("listening", {
    url,
    console_url: `${url}/console`,
    docs_url: `${url}/docs`,
    health_url: `${url}/health`,
    metrics_url: metrics?.url ?? "off",
    version: service.deps.version,
    instance_id: instanceId,
    database: service.deps.db.kind,
    tls: tls?.source ?? "proxy",
  });
  const outbox = fileOutboxDir(config);
  // Without SMTP_URL nothing is emailed: say at once where a verification link will be.
  if (outbox) log.info("dev_mailbox", { outbox, mailbox_url: `${url}/console/mailbox`, hint: "no SMTP_URL: mail is written to the outbox folder and each message's links are logged (dev_mail)" });
  // Operators reach an embedded database on disk through the service (src/ops/channel.ts); a
  // service without the channel still serves, and `warden ops` then says the database is in use.
  const channel =
    service.deps.db.kind === "embedded" && config.dataDir !== "memory://"
      ? await startOpsChannel({ dataDir: config.dataDir, db: service.deps.db, log }).catch((err: Error) => void log.error("ops_channel_failed", { error: err.message }))
      : undefined;
  const stop = async () => {
    // From now on /readyz answers 503, so a load balancer stops sending requests here.
    service.deps.probes.drain();
    // Stop accepting; requests in flight finish (for at most DRAIN_MS), and only then does the
    // database close under them.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const drained = await Promise.race([
      server.stop().then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), DRAIN_MS))),
    ]);
    clearTimeout(timer);
    if (!drained) await server.stop(true);
    await metrics?.listener.stop(true);
    await channel?.close();
    await service.close();
  };
  return { server, service, url, metricsUrl: metrics?.url, stop };
}

function hostPart(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * The plain-HTTP METRICS_ADDR listener, unless it is off. A failure to bind stops the start when
 * METRICS_ADDR was asked for; the default address, when taken (another instance on this host),
 * gives way to a free port, and the log says so.
 */
async function listenMetrics(config: Config, service: Service, server: Listener) {
  if (!config.metricsAddr) return undefined;
  const { host, port, fromDefault } = config.metricsAddr;
  const fetch = metricsEndpoint(service.deps.metrics, service.deps.probes);
  const bind = (at: number) => {
    const listener = listen({ port: at, hostname: host, fetch });
    return { listener, url: `http://${hostPart(host)}:${listener.port}` };
  };
  try {
    try {
      return bind(port);
    } catch (err) {
      if (!fromDefault) throw err;
      const moved = bind(0);
      service.deps.log.warn("metrics_port_taken", {
        wanted: `${hostPart(host)}:${port}`,
        metrics_url: moved.url,
        error: (err as Error)?.message ?? String(err),
        hint: "set METRICS_ADDR to choose the address (one per instance on a host), or METRICS_ADDR=off",
      });
      return moved;
    }
  } catch (err) {
    await server.stop(true);
    await service.close();
    throw new Error(`METRICS_ADDR ${host}:${port}: ${(err as Error)?.message ?? err}`);
  }
}
