// A real HTTPS receiver of webhooks for tests (Bun.serve on 127.0.0.1, a free port, the dev
// certificate), whose behaviour each path chooses, and a service on the shared test database
// that delivers to it (WEBHOOK_ALLOW_PRIVATE on, the dev certificate trusted through
// NODE_EXTRA_CA_CERTS, short deadlines). Only one delivering service runs at a time: close it
// after each test, or it takes the rows of the next.
import type { Server } from "bun";
import { readFileSync } from "node:fs";
import type { Config } from "../../src/config.ts";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import type { PostLimits } from "../../src/webhooks/post.ts";
import type { Lookup } from "../../src/webhooks/target.ts";
import { devCertificate } from "../security/helpers.ts";
import { testConfig, testService } from "./service.ts";

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

export interface Receiver {
  /** https://127.0.0.1:PORT */
  base: string;
  port: number;
  received: Received[];
  /** Requests to one path right now. */
  to(path: string): Received[];
  /** Requests to one path, waiting until there are at least `count`. */
  waitFor(path: string, count?: number, timeoutMs?: number): Promise<Received[]>;
  /** Whether the stream of a /huge answer was cut by the client. */
  hugeCancelled: () => boolean;
  stop(): void;
}

/**
 * Paths: /ok 204; /gone 410; /fail 500; /redirect 302 to /ok?redirected; /slow answers only at
 * stop; /huge 200 with an endless body; /flaky/<name> 500 the first time, then 200.
 */
export async function startReceiver(): Promise<Receiver> {
  const { cert, key } = await devCertificate();
  const received: Received[] = [];
  const flaky = new Set<string>();
  let cancelled = false;
  const waiting: (() => void)[] = [];
  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") },
    async fetch(request) {
      const url = new URL(request.url);
      received.push({ path: url.pathname + url.search, headers: Object.fromEntries(request.headers), body: await request.text(), at: Date.now() });
      const path = url.pathname;
      if (path === "/ok") return new Response(null, { status: 204 });
      if (path === "/gone") return new Response("gone", { status: 410 });
      if (path === "/fail") return new Response("no", { status: 500 });
      if (path === "/redirect") return new Response(null, { status: 302, headers: { location: `${url.origin}/ok?redirected` } });
      if (path === "/slow") return new Promise<Response>((resolve) => waiting.push(() => resolve(new Response("late"))));
      if (path === "/huge") {
        const chunk = new Uint8Array(16 * 1024).fill(120);
        return new Response(
          new ReadableStream({
            pull(controller) {
              controller.enqueue(chunk);
            },
            cancel() {
              cancelled = true;
            },
          }),
          { status: 200 },
        );
      }
      if (path.startsWith("/flaky/")) {
        if (flaky.has(path)) return new Response(null, { status: 200 });
        flaky.add(path);
        return new Response("not yet", { status: 500 });
      }
      return new Response("unknown path", { status: 404 });
    },
  });
  const port = server.port!;
  const to = (path: string) => received.filter((r) => r.path === path);
  return {
    base: `https://127.0.0.1:${port}`,
    port,
    received,
    to,
    async waitFor(path, count = 1, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (to(path).length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} request(s) to ${path}, got ${to(path).length}`);
        await Bun.sleep(10);
      }
      return to(path);
    },
    hugeCancelled: () => cancelled,
    stop() {
      for (const wake of waiting.splice(0)) wake();
      server.stop(true);
    },
  };
}

/** Short enough for tests, long enough for a loaded machine to connect. */
export const TEST_LIMITS: PostLimits = { timeoutMs: 2_000, maxResponseBytes: 64 * 1024 };

/**
 * A service on the shared test database that delivers webhooks: private targets allowed, the dev
 * certificate trusted (as NODE_EXTRA_CA_CERTS would make it), unless overrides say otherwise.
 */
export async function webhookService(opts: { config?: Partial<Config>; lookup?: Lookup; limits?: PostLimits; lines?: string[] } = {}): Promise<Service> {
  const { db } = await testService();
  const { cert } = await devCertificate();
  const config = testConfig({ webhookDelivery: true, webhookAllowPrivate: true, extraCaCerts: cert, ...opts.config });
  return createService(config, { db, log: createLogger("info", (line) => opts.lines?.push(line)), webhookLookup: opts.lookup, webhookLimits: opts.limits ?? TEST_LIMITS });
}

/** Runs fn with a service and closes it after, whatever happens. */
export async function withService<T>(service: Service, fn: (service: Service) => Promise<T>): Promise<T> {
  try {
    return await fn(service);
  } finally {
    await service.close();
  }
}

export async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}
