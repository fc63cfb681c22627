// The METRICS_ADDR listener as Prometheus and an orchestrator use it: /metrics in the text format
// over plain HTTP, /livez and /readyz on it and on the HTTPS listener, /readyz 503 while a graceful
// stop drains and while the database does not answer, and no listener at all with METRICS_ADDR=off.
// The Grafana dashboard in docs/ asks only for metrics a real scrape has.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { loadConfig } from "../../src/config.ts";
import { createService } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { apiKey } from "../helpers/customer.ts";
import { declaredMetrics, parseExposition, valueOf } from "../helpers/metrics.ts";
import { call, signup, testConfig, testService } from "../helpers/service.ts";
import { DbUnavailableError, type Db } from "../../src/db/index.ts";
import { ROOT, startWire, wire, type Wire } from "../security/helpers.ts";

const METRICS_ON = { metricsAddr: { host: "127.0.0.1", port: 0 } };
const REQUIRED = [
  "warden_http_requests_total",
  "warden_http_request_duration_seconds",
  "warden_decisions_total",
  "warden_quota_refusals_total",
  "warden_auth_failures_total",
  "warden_receipt_batch_size",
  "warden_mail_outbox_pending",
  "warden_webhook_outbox_pending",
  "process_resident_memory_bytes",
  "warden_event_loop_lag_seconds",
];

const running: Wire[] = [];
afterAll(async () => {
  for (const server of running) await server.stop().catch(() => {});
});

async function started(overrides = {}): Promise<Wire> {
  const server = await startWire(overrides);
  running.push(server);
  return server;
}

describe("the METRICS_ADDR listener", () => {
  test("serves /metrics in the Prometheus text format, /livez and /readyz, and nothing else", async () => {
    const server = await started(METRICS_ON);
    expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const a = await signup();
    expect((await wire(server.url, "POST", "/v1/protect", { json: { action: "document.read" }, headers: apiKey(a.apiKey) })).status).toBe(200);

    const scrape = await fetch(`${server.metricsUrl}/metrics`);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
    const text = await scrape.text();
    const declared = declaredMetrics(text);
    for (const name of REQUIRED) expect(declared.has(name)).toBe(true);
    expect(declared.get("warden_http_request_duration_seconds")).toBe("histogram");
    expect(declared.get("warden_receipt_batch_size")).toBe("histogram");
    const samples = parseExposition(text);
    // This listener's service answered the protect over the wire: it counted it.
    expect(valueOf(samples, "warden_decisions_total", { kind: "protect", decision: "ALLOWED" })).toBe(1);
    expect(valueOf(samples, "warden_http_requests_total", { method: "POST", route: "/v1/protect", status: "200" })).toBe(1);

    for (const path of ["/livez", "/readyz"]) {
      const plain = await fetch(server.metricsUrl + path);
      expect({ path, status: plain.status, body: await plain.json() }).toEqual({ path, status: 200, body: { ok: true } });
      const https = await wire(server.url, "GET", path);
      expect({ path, status: https.status, body: https.body }).toEqual({ path, status: 200, body: { ok: true } });
    }
    const other = await fetch(`${server.metricsUrl}/health`);
    expect(other.status).toBe(404);
    expect((await other.json()).error).toBe("not_found");
    expect((await fetch(`${server.metricsUrl}/metrics`, { method: "POST" })).status).toBe(404);
  });

  test("the Grafana dashboard queries only metrics that a real scrape declares", async () => {
    const server = await started(METRICS_ON);
    const declared = declaredMetrics(await (await fetch(`${server.metricsUrl}/metrics`)).text());
    const dashboard = JSON.parse(readFileSync(join(ROOT, "docs", "grafana", "warden-dashboard.json"), "utf8"));
    const exprs: string[] = dashboard.panels.flatMap((panel: { targets: { expr: string }[] }) => panel.targets.map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(0);
    const used = new Set<string>();
    for (const expr of exprs) {
      for (const [name] of expr.matchAll(/\b(?:warden|process)_[a-z0-9_]+/g)) {
        // A histogram's series carry _bucket, _sum and _count after the declared name.
        const base = name.replace(/_(bucket|sum|count)$/, "");
        const metric = declared.has(name) ? name : declared.get(base) === "histogram" ? base : undefined;
        if (!metric) throw new Error(`the dashboard asks for ${name}, which /metrics does not have (in: ${expr})`);
        used.add(metric);
      }
    }
    // What the dashboard is for: decisions, latency by route, refusals, auth failures, batches, mail.
    for (const name of ["warden_decisions_total", "warden_http_request_duration_seconds", "warden_quota_refusals_total", "warden_auth_failures_total", "warden_receipt_batch_size", "warden_mail_outbox_pending"]) {
      expect(used.has(name)).toBe(true);
    }
  });

  test("/readyz answers 503 while a graceful stop drains requests in flight; then both listeners close", async () => {
    const server = await started(METRICS_ON);
    // A request in flight: its headers promise a body that has not arrived yet.
    const { hostname, port } = new URL(server.url);
    const socket = tlsConnect({ host: hostname, port: Number(port), rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => socket.once("secureConnect", resolve).once("error", reject));
    const answer = new Promise<string>((resolve) => {
      let text = "";
      socket.on("data", (d: Buffer) => (text += d.toString()));
      socket.on("close", () => resolve(text));
      socket.on("error", () => resolve(text));
    });
    const body = JSON.stringify({ action: "document.read" });
    socket.write(`POST /v1/protect HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body.slice(0, 5)}`);
    await Bun.sleep(200);

    expect((await fetch(`${server.metricsUrl}/readyz`)).status).toBe(200);
    const stopping = server.stop();
    let stopped = false;
    void stopping.then(() => (stopped = true));
    const draining = await fetch(`${server.metricsUrl}/readyz`);
    expect(draining.status).toBe(503);
    expect(draining.headers.get("retry-after")).toBe("2");
    expect(await draining.json()).toMatchObject({ ok: false, error: "unavailable", message: "The service is stopping." });
    expect((await fetch(`${server.metricsUrl}/livez`)).status).toBe(200);
    expect(stopped).toBe(false);

    // The request in flight completes, and only then does the stop end.
    socket.write(body.slice(5));
    expect(await answer).toStartWith("HTTP/1.1 401");
    await stopping;
    expect(await fetch(`${server.metricsUrl}/livez`).then(() => "answered", () => "refused")).toBe("refused");
  }, 60_000);

  test("/readyz answers 503 when the database refuses or hangs; /livez and /metrics still answer", async () => {
    const { db } = await testService();
    let state: "up" | "refusing" | "hanging" = "up";
    const gate = async () => {
      if (state === "refusing") throw new DbUnavailableError("connect ECONNREFUSED");
      if (state === "hanging") await new Promise(() => {});
    };
    const flaky: Db = {
      ...db,
      query: async (...args) => (await gate(), db.query(...args)),
      one: async (...args) => (await gate(), db.one(...args)),
    };
    const service = await createService(testConfig(), { db: flaky, log: createLogger("silent") });
    try {
      expect((await call("GET", "/readyz", { service })).status).toBe(200);
      const pending = valueOf(parseExposition((await service.deps.metrics.scrape()).text), "warden_mail_outbox_pending");
      expect(pending).toBeGreaterThanOrEqual(0);
      for (const mode of ["refusing", "hanging"] as const) {
        state = mode;
        const asked = performance.now();
        const down = await call("GET", "/readyz", { service });
        expect({ mode, status: down.status }).toEqual({ mode, status: 503 });
        expect(down.body).toMatchObject({ ok: false, error: "unavailable", message: "The database does not answer.", retry_after: 2 });
        expect(down.headers.get("retry-after")).toBe("2");
        expect(performance.now() - asked).toBeLessThan(5000);
        expect((await call("GET", "/livez", { service })).status).toBe(200);
        // The backlog gauge keeps its last value rather than failing the scrape.
        expect(valueOf(parseExposition((await service.deps.metrics.scrape()).text), "warden_mail_outbox_pending")).toBe(pending);
      }
      state = "up";
      expect((await call("GET", "/readyz", { service })).status).toBe(200);
    } finally {
      state = "up";
      await service.close();
    }
  }, 60_000);

  test("a METRICS_ADDR that cannot be bound stops the start, naming it", async () => {
    const taken = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    try {
      const port = taken.port!;
      await expect(startWire({ metricsAddr: { host: "127.0.0.1", port } })).rejects.toThrow(`METRICS_ADDR 127.0.0.1:${port}`);
    } finally {
      taken.stop(true);
    }
  });

  test("METRICS_ADDR=off opens no listener", async () => {
    const server = await started({ metricsAddr: loadConfig({ METRICS_ADDR: "off" }).metricsAddr });
    expect(server.metricsUrl).toBeUndefined();
    const line = server.lines.map((l) => JSON.parse(l)).find((l) => l.event === "listening");
    expect(line).toMatchObject({ metrics_url: "off" });
  });
});

describe("METRICS_ADDR and the start-up line", () => {
  test("METRICS_ADDR: the default, off, host:port, [IPv6]:port; anything else is refused", () => {
    expect(loadConfig({}).metricsAddr).toEqual({ host: "127.0.0.1", port: 9464, fromDefault: true });
    expect(loadConfig({ METRICS_ADDR: "off" }).metricsAddr).toBeNull();
    expect(loadConfig({ METRICS_ADDR: "OFF" }).metricsAddr).toBeNull();
    expect(loadConfig({ METRICS_ADDR: "0.0.0.0:9100" }).metricsAddr).toEqual({ host: "0.0.0.0", port: 9100 });
    expect(loadConfig({ METRICS_ADDR: "[::1]:9464" }).metricsAddr).toEqual({ host: "::1", port: 9464 });
    for (const bad of ["9464", "localhost", "127.0.0.1:", "127.0.0.1:70000", "::1:9464", "no"]) {
      expect(() => loadConfig({ METRICS_ADDR: bad })).toThrow(/METRICS_ADDR must be HOST:PORT/);
    }
  });

  test("the start-up line names the version, an instance id and both listeners", async () => {
    const server = await started(METRICS_ON);
    const line = server.lines.map((l) => JSON.parse(l)).find((l) => l.event === "listening");
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect(line).toMatchObject({ url: server.url, metrics_url: server.metricsUrl, version: pkg.version });
    expect(line.instance_id).toMatch(/^inst_[0-9A-Za-z]{16}$/);
    const other = await started();
    expect(other.lines.map((l) => JSON.parse(l)).find((l) => l.event === "listening").instance_id).not.toBe(line.instance_id);
  });
});
