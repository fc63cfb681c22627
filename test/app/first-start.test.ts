// The first minutes with a fresh service: the start-up line names the addresses to open, the bare
// address leads a browser to the console, there is a favicon, a service without SMTP_URL says where
// its mail goes, and a second instance on the same host starts even though the default metrics
// port is taken by the first.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../../src/app/server.ts";
import { loadConfig } from "../../src/config.ts";
import { buildConsole } from "../../src/console/build.ts";
import { createLogger } from "../../src/log.ts";
import { startInbox } from "../helpers/mail.ts";
import { testConfig, testService } from "../helpers/service.ts";
import { devCertificate, startWire, wire, type Wire } from "../security/helpers.ts";

const running: Wire[] = [];
afterAll(async () => {
  for (const server of running) await server.stop().catch(() => {});
});

async function started(overrides = {}): Promise<Wire> {
  const server = await startWire(overrides);
  running.push(server);
  return server;
}

const events = (server: Wire, event: string) => server.lines.map((l) => JSON.parse(l)).filter((l) => l.event === event);
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

beforeAll(async () => {
  // npm test builds the console first (pretest); a direct `bun test` of this file builds here.
  await buildConsole();
}, 60_000);

describe("the start-up line", () => {
  test("names the console, the API docs and the health check, and each answers", async () => {
    const server = await started();
    const [line] = events(server, "listening");
    expect(line).toMatchObject({ url: server.url, console_url: `${server.url}/console`, docs_url: `${server.url}/docs`, health_url: `${server.url}/health` });
    for (const [field, type] of [["console_url", "text/html"], ["docs_url", "text/html"], ["health_url", "application/json"]]) {
      const reply = await fetch(line[field], insecure);
      expect({ field, status: reply.status, type: reply.headers.get("content-type")?.split(";")[0] }).toEqual({ field, status: 200, type });
    }
  });

  test("LOG_FORMAT=pretty shows the same addresses as key=value", async () => {
    const { db } = await testService();
    const { cert, key } = await devCertificate();
    const lines: string[] = [];
    const server = await serve(testConfig({ port: 0, host: "127.0.0.1", tlsCert: cert, tlsKey: key }), { db, log: createLogger("info", (l) => lines.push(l), "pretty") });
    try {
      const line = lines.find((l) => / INFO  listening /.test(l));
      expect(line).toContain(` console_url=${server.url}/console `);
      expect(line).toContain(` docs_url=${server.url}/docs `);
      expect(line).toContain(` health_url=${server.url}/health `);
    } finally {
      await server.stop();
    }
  });
});

describe("where mail goes", () => {
  test("without SMTP_URL the start says where mail is written and where to read it; with SMTP_URL it does not", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "warden-first-"));
    const inbox = await startInbox();
    try {
      const files = await started({ dataDir });
      const [line] = events(files, "dev_mailbox");
      expect(line).toMatchObject({ level: "info", outbox: join(dataDir, "outbox"), mailbox_url: `${files.url}/console/mailbox` });
      expect(line.hint).toContain("SMTP_URL");
      const smtp = await started({ dataDir, smtpUrl: inbox.url });
      expect(events(smtp, "dev_mailbox")).toEqual([]);
      // An in-memory DATA_DIR (the other tests here) writes no files either.
      const memory = await started();
      expect(events(memory, "dev_mailbox")).toEqual([]);
    } finally {
      for (const server of running.splice(0)) await server.stop();
      await inbox.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("GET / and /favicon.ico", () => {
  test("GET / sends a browser to the console (302), with the usual security headers", async () => {
    const server = await started();
    const reply = await fetch(`${server.url}/`, { ...insecure, redirect: "manual" });
    expect(reply.status).toBe(302);
    expect(reply.headers.get("location")).toBe("/console");
    expect(reply.headers.get("strict-transport-security")).toContain("max-age=");
    expect(reply.headers.get("cache-control")).toBe("no-store");
    expect(reply.headers.get("x-request-id")).toMatch(/^req_/);
    const followed = await fetch(`${server.url}/`, { ...insecure, headers: { accept: "text/html" } });
    expect(new URL(followed.url).pathname).toBe("/console");
    expect(followed.status).toBe(200);
    expect(await followed.text()).toContain("<title>warden console</title>");
  });

  test("/favicon.ico is a 16x16 ICO, cacheable, not in the OpenAPI document", async () => {
    const server = await started();
    const reply = await fetch(`${server.url}/favicon.ico`, insecure);
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toBe("image/x-icon");
    expect(reply.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(reply.headers.get("x-content-type-options")).toBe("nosniff");
    const ico = Buffer.from(await reply.arrayBuffer());
    // ICONDIR (reserved 0, type 1, one image), then a 16x16, 32-bit entry whose image follows at 22.
    expect([ico.readUInt16LE(0), ico.readUInt16LE(2), ico.readUInt16LE(4), ico[6], ico[7], ico.readUInt16LE(12), ico.readUInt32LE(18)]).toEqual([0, 1, 1, 16, 16, 32, 22]);
    expect(ico.length).toBe(22 + ico.readUInt32LE(14));
    const paths = Object.keys((await wire(server.url, "GET", "/openapi.json")).body.paths);
    expect(paths.filter((p) => p === "/" || p === "/favicon.ico")).toEqual([]);
  });
});

describe("a second instance on one host", () => {
  test("METRICS_ADDR unset: a taken default port gives way to a free one, and the log says so", async () => {
    const first = await started({ metricsAddr: { host: "127.0.0.1", port: 0 } });
    const taken = Number(new URL(first.metricsUrl!).port);
    // The second instance's default is the port the first holds (as 9464 would be).
    const second = await started({ metricsAddr: { host: "127.0.0.1", port: taken, fromDefault: true } });
    expect(second.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(second.metricsUrl).not.toBe(first.metricsUrl);
    expect((await fetch(`${second.metricsUrl}/livez`)).status).toBe(200);
    expect((await fetch(`${first.metricsUrl}/livez`)).status).toBe(200);
    const [warning] = events(second, "metrics_port_taken");
    expect(warning).toMatchObject({ level: "warn", wanted: `127.0.0.1:${taken}`, metrics_url: second.metricsUrl });
    expect(warning.hint).toContain("METRICS_ADDR");
    expect(events(second, "listening")[0].metrics_url).toBe(second.metricsUrl);
    expect(events(first, "metrics_port_taken")).toEqual([]);
  });

  test("METRICS_ADDR set: a taken port still stops the start, naming it", async () => {
    const first = await started({ metricsAddr: { host: "127.0.0.1", port: 0 } });
    const taken = Number(new URL(first.metricsUrl!).port);
    const explicit = loadConfig({ METRICS_ADDR: `127.0.0.1:${taken}` }).metricsAddr;
    await expect(startWire({ metricsAddr: explicit })).rejects.toThrow(`METRICS_ADDR 127.0.0.1:${taken}`);
  });

  test("only an unset METRICS_ADDR counts as the default", () => {
    expect(loadConfig({}).metricsAddr).toEqual({ host: "127.0.0.1", port: 9464, fromDefault: true });
    expect(loadConfig({ METRICS_ADDR: "" }).metricsAddr).toEqual({ host: "127.0.0.1", port: 9464, fromDefault: true });
    expect(loadConfig({ METRICS_ADDR: "127.0.0.1:9464" }).metricsAddr).toEqual({ host: "127.0.0.1", port: 9464 });
    expect(loadConfig({ METRICS_ADDR: "off" }).metricsAddr).toBeNull();
  });
});
