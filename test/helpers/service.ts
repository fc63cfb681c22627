// One service per test process, on the embedded database in memory or, when TEST_DATABASE_URL
// names one, on a real PostgreSQL server. Tests talk to it through `handle` as a client would.
import { decodeJwt } from "jose";
import { loadConfig, type Config } from "../../src/config.ts";
import { openDb, type Db } from "../../src/db/index.ts";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { expectDocumented } from "./openapi.ts";

export const BASE = "https://warden.test";
export const logLines: string[] = [];

let shared: Promise<{ service: Service; db: Db }> | undefined;

export function testConfig(overrides: Partial<Config> = {}): Config {
  // Brute-force limits far above what the suite does from its one (unknown) address; tests of
  // the limits pass tight ones in overrides.
  const generous = { RATE_LIMIT_AUTH_ADDRESS: "1000000/60", RATE_LIMIT_LOGIN_EMAIL: "1000000/60", RATE_LIMIT_MAIL_EMAIL: "1000000/60",
    RATE_LIMIT_AUTH_NETWORK: "1000000/60", RATE_LIMIT_LOGIN_PAIR: "1000000/60", PASSWORD_HASH_CONCURRENCY: "1024",
    LOG_READS_PER_SECOND: "1000000" };
  // No metrics listener unless a test asks for one: many services run side by side.
  // No webhook deliveries unless a test asks for them: a worker of each service would take the rows of the others on a shared database.
  return { ...loadConfig({ BCRYPT_COST: "4", LOG_LEVEL: "info", DATA_DIR: "memory://", METRICS_ADDR: "off", WEBHOOK_DELIVERY: "0", APPROVAL_SWEEP: "0", ...generous }), ...overrides };
}

export function openTestDb(): Promise<Db> {
  return openDb({ databaseUrl: process.env.TEST_DATABASE_URL, dataDir: "memory://", poolSize: 10 });
}

export function testService(): Promise<{ service: Service; db: Db }> {
  shared ??= (async () => {
    const db = await openTestDb();
    const service = await createService(testConfig(), { db, log: createLogger("info", (line) => logLines.push(line)) });
    return { service, db };
  })();
  return shared;
}

/**
 * A second service instance on the shared test database, as another process would run it: on a
 * server with a connection pool of its own; embedded, on the one database. Close it when done.
 */
export async function secondInstance(): Promise<{ service: Service; close(): Promise<void> }> {
  const { db } = await testService();
  const ownDb = process.env.TEST_DATABASE_URL ? await openTestDb() : undefined;
  const service = await createService(testConfig(), { db: ownDb ?? db, log: createLogger("silent") });
  return {
    service,
    async close() {
      await service.close();
      await ownDb?.close();
    },
  };
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export async function call(
  method: string,
  path: string,
  opts: { json?: unknown; body?: BodyInit; headers?: Record<string, string>; base?: string; service?: Service; ip?: string } = {},
): Promise<Reply> {
  const service = opts.service ?? (await testService()).service;
  const headers: Record<string, string> = { ...opts.headers };
  let body = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers["content-type"] ??= "application/json";
  }
  // ip: the peer address the server would pass in (src/app/server.ts).
  const request = new Request((opts.base ?? BASE) + path, { method, headers, body });
  const reply = await toReply(await service.handle(request, { ip: opts.ip }));
  // Every reply a test reads is one the OpenAPI document describes (test/helpers/openapi.ts).
  expectDocumented(service, request, { status: reply.status, contentType: reply.headers.get("content-type"), body: reply.body });
  return reply;
}

/** A response as tests read it: status, headers, the text and its JSON (undefined when not JSON). */
export async function toReply(response: Response): Promise<Reply> {
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

let counter = 0;
export function uniqueEmail(tag = "user"): string {
  return `${tag}.${Date.now().toString(36)}.${(counter++).toString(36)}.${crypto.randomUUID().slice(0, 8)}@example.com`;
}

export const GOOD_PASSWORD = "correct horse battery staple";

export async function signup(email = uniqueEmail(), password = GOOD_PASSWORD) {
  const reply = await call("POST", "/auth/signup", { json: { email, password } });
  if (reply.status !== 201) throw new Error(`signup failed: ${reply.status} ${reply.text}`);
  return { email, password, token: reply.body.token as string, tenantId: reply.body.tenant_id as string, memberId: reply.body.member_id as string, apiKey: reply.body.api_key as string };
}

/** The error body's shape (docs/api.md, Error codes), for any failure. */
export function expectErrorShape(reply: Reply, status: number, error: string): void {
  if (reply.status !== status || reply.body?.error !== error || reply.body?.ok !== false || typeof reply.body?.message !== "string" || typeof reply.body?.request_id !== "string") {
    throw new Error(`expected ${status} ${error}, got ${reply.status} ${reply.text}`);
  }
  if (reply.headers.get("x-request-id") !== reply.body.request_id) throw new Error("X-Request-ID header and body request_id differ");
}

/** Who a session token is (its unverified claims): the person, their member of the tenant, and the epochs it carries. */
export function subjectOf(token: string): { account_id: string; account_epoch: number; tenant_id: string; member_id: string; member_epoch: number } {
  const claims = decodeJwt(token);
  return { account_id: claims.sub as string, account_epoch: claims.sep as number, tenant_id: claims.tid as string, member_id: claims.mid as string, member_epoch: claims.mep as number };
}
