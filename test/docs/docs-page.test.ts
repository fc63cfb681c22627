// /docs loads nothing from another origin and carries a Content-Security-Policy (docs/decisions.md,
// /docs): the page, its pinned Swagger UI copy served here, and, when Chromium is present, the page
// rendered in a real browser with every request it makes recorded.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { call } from "../helpers/service.ts";
import { keepPlaywrightMessagesInOrder } from "../helpers/playwright.ts";
import { startWire } from "../security/helpers.ts";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/** Every URL the HTML names in src or href. */
const references = (html: string) => [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);

describe("/docs", () => {
  test("the page references only same-origin paths and carries a CSP that allows nothing else", async () => {
    const page = await call("GET", "/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const refs = references(page.text);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) expect(ref).toMatch(/^\/(?!\/)/);
    expect(page.text).not.toMatch(/https?:\/\//);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    // No directive names another source than this origin (or inline styles and data: images).
    for (const source of csp.split(";").flatMap((d) => d.trim().split(/\s+/).slice(1))) {
      expect(["'self'", "'none'", "'unsafe-inline'", "data:"]).toContain(source);
    }
    expect(csp).not.toContain("'unsafe-inline'; script");
  });

  test("the assets are served from this origin: the pinned Swagger UI and its start script", async () => {
    expect(pkg.dependencies["swagger-ui-dist" as keyof typeof pkg.dependencies]).toMatch(/^\d+\.\d+\.\d+$/);
    const page = await call("GET", "/docs");
    for (const ref of references(page.text)) {
      const asset = await call("GET", ref);
      expect(asset.status).toBe(200);
      expect(asset.headers.get("content-type")).toMatch(/^text\/(javascript|css)/);
      expect(asset.text.length).toBeGreaterThan(10);
    }
    const bundle = await call("GET", "/docs/assets/swagger-ui-bundle.js");
    expect(bundle.text).toContain("SwaggerUIBundle");
    const init = await call("GET", "/docs/assets/init.js");
    expect(init.text).toContain('"/openapi.json"');
    expect(init.text).toContain("validatorUrl: null");
  });

  test("the docs routes stay out of the OpenAPI document", async () => {
    const paths = Object.keys((await call("GET", "/openapi.json")).body.paths);
    expect(paths.filter((p) => p.startsWith("/docs"))).toEqual([]);
  });
});

describe.skipIf(!existsSync(CHROMIUM))("/docs in Chromium", () => {
  const cleanup: (() => Promise<unknown> | void)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  test("renders the document with requests to this origin only and no CSP violation", async () => {
    const server = await startWire();
    cleanup.push(() => server.stop());
    const { chromium } = await import("playwright-core");
    keepPlaywrightMessagesInOrder(chromium);
    const userDataDir = mkdtempSync(join(tmpdir(), "warden-docs-"));
    cleanup.push(() => rmSync(userDataDir, { recursive: true, force: true }));
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      ignoreHTTPSErrors: true,
    });
    cleanup.push(() => context.close());
    const requests: string[] = [];
    const violations: string[] = [];
    context.on("request", (r) => requests.push(r.url()));
    const page = context.pages()[0] ?? (await context.newPage());
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(`${server.url}/docs`);
    await page.locator(".swagger-ui .info .title", { hasText: "warden" }).waitFor({ timeout: 30_000 });
    await page.locator(".opblock-summary-path", { hasText: "/v1/protect" }).first().waitFor();
    const origin = new URL(server.url).origin;
    expect(requests.filter((u) => !u.startsWith(origin) && !u.startsWith("data:"))).toEqual([]);
    expect(violations).toEqual([]);
  }, 120_000);
});
