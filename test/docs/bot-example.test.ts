// examples/bot.ts, the TypeScript client of docs/bot-example.md, run as a reader would run it
// against a real HTTPS server: signup, a key, protect, execute, offline verification.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../../src/app/server.ts";
import { createLogger } from "../../src/log.ts";
import { testConfig, testService } from "../helpers/service.ts";

const ROOT = join(import.meta.dir, "..", "..");
let dir: string;
let started: Awaited<ReturnType<typeof serve>>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-example-"));
  const { db } = await testService();
  started = await serve(testConfig({ port: 0, dataDir: dir }), { db, log: createLogger("silent") });
}, 30_000);

afterAll(async () => {
  await started?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("examples/bot.ts runs from signup to offline verification", async () => {
  const child = Bun.spawn([process.execPath, "examples/bot.ts"], {
    cwd: ROOT,
    env: { ...process.env, WARDEN_URL: started.url, NODE_TLS_REJECT_UNAUTHORIZED: "0" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  expect(stdout).toContain("large payment: DENIED");
  expect(stdout).toContain("small payment: ALLOWED");
  // As docs/bot-example.md shows it: after the two keys' key.created events and the two decisions.
  expect(stdout).toMatch(/executed: true, receipt rcpt_\w+ \(seq 4\)/);
  expect(stdout).toContain("second execute refused: already_executed");
  expect(stdout).toContain("execute of the denied decision refused: decision_denied");
  const summary = JSON.parse(stdout.trim().split("\n").at(-1)!);
  expect(summary).toEqual({
    ok: true,
    verified: { large: true, small: true, executed: true, tampered: false, claim_tampered: false, signed_after_compromise: false, signed_before_compromise: true },
  });
}, 30_000);
