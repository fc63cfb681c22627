// The console as the server serves it: pages and assets, their headers (CSP, caching), the 404s
// for anything else under /console, the bundle's size, and the pure helpers of the client.
import { beforeAll, describe, expect, test } from "bun:test";
import { gunzipSync, gzipSync } from "node:zlib";
import { consoleSource, loadConsoleAssets, useConsoleSource } from "../../src/console/assets.ts";
import { buildConsole } from "../../src/console/build.ts";
import { pageOf, PRIVATE_PAGES, PUBLIC_PAGES } from "../../src/console/pages.ts";
import { CONSOLE_CSP } from "../../src/console/routes.ts";
import { dayLabels, scaleTop } from "../../src/console/app/scale.ts";
import { protectSnippet } from "../../src/console/app/snippet.ts";
import { createService } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { BASE, call, expectErrorShape, testConfig, testService } from "../helpers/service.ts";

// What every page loads (index.html, the entry script, the CSS), and the policy editor's code
// editor, a chunk of its own that only the policy page loads (docs/console.md, "Build and serving").
const BUDGET_BYTES = 100 * 1024;
const EDITOR_BUDGET_BYTES = 160 * 1024;
let html = "";
let assetPaths: string[] = [];
/** The chunks the entry script imports on demand. */
let chunkPaths: string[] = [];

beforeAll(async () => {
  // npm test builds first (pretest); a direct `bun test` of this file builds here.
  await buildConsole();
  const page = await call("GET", "/console");
  html = page.text;
  assetPaths = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
  const scripts = await Promise.all(assetPaths.filter((p) => p.endsWith(".js")).map(async (p) => (await call("GET", p)).text));
  chunkPaths = [...new Set(scripts.flatMap((js) => [...js.matchAll(/import\("(\/console\/assets\/[^"]+\.js)"\)/g)].map((m) => m[1])))];
}, 60_000);

describe("pages", () => {
  const paths = ["/console", "/console/", ...[...PUBLIC_PAGES, ...PRIVATE_PAGES].map((p) => `/console/${p}`), "/console/receipts/rcpt_0123456789abcdefghijkl", "/console/approvals/apv_0123456789abcdefghijkl", "/console/verify?token=abc", "/console/reset?token=abc"];

  test("every page path answers index.html with the console's security headers", async () => {
    for (const path of paths) {
      const reply = await call("GET", path);
      expect(reply.status).toBe(200);
      expect(reply.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(reply.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
      expect(reply.headers.get("x-frame-options")).toBe("DENY");
      expect(reply.headers.get("referrer-policy")).toBe("no-referrer");
      expect(reply.headers.get("cache-control")).toBe("no-cache");
      expect(reply.headers.get("strict-transport-security")).toContain("max-age=");
      expect(reply.text).toBe(html);
    }
  });

  test("the CSP allows only the service's own origin, and no inline code", () => {
    const directives = Object.fromEntries(CONSOLE_CSP.split(/;\s*/).map((d) => [d.split(" ")[0], d.split(" ").slice(1).join(" ")]));
    expect(directives).toEqual({
      "default-src": "'self'",
      "script-src": "'self'",
      "style-src": "'self'",
      "img-src": "'self' data:",
      "connect-src": "'self'",
      "frame-ancestors": "'none'",
      "base-uri": "'none'",
      "form-action": "'self'",
    });
    expect(CONSOLE_CSP).not.toContain("unsafe");
  });

  test("index.html loads only its own assets: no inline script or style, nothing from elsewhere", () => {
    expect(assetPaths.some((p) => p.endsWith(".js"))).toBe(true);
    expect(assetPaths.some((p) => p.endsWith(".css"))).toBe(true);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
  });

  test("an unchanged index.html revalidates to 304 by its ETag", async () => {
    const first = await call("GET", "/console/keys");
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await call("GET", "/console/dashboard", { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
  });

  test("any other page path answers a browser index.html with status 404: the console's own page-not-found page", async () => {
    const browser = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };
    for (const path of ["/console/nope", "/console/keys/extra", "/console/receipts/not-a-receipt", "/console/api/keys"]) {
      const reply = await call("GET", path, { headers: browser });
      expect(reply.status).toBe(404);
      expect(reply.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(reply.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
      expect(reply.headers.get("etag")).toBeNull();
      expect(reply.text).toBe(html);
    }
    // A missing asset is no page: a script or style asked for it, and gets the JSON 404.
    expectErrorShape(await call("GET", "/console/assets/index-nothere.js", { headers: browser }), 404, "not_found");
    expectErrorShape(await call("POST", "/console/nope", { headers: browser }), 404, "not_found");
  });

  test("anything else under /console, for a client that does not ask for HTML, is the documented JSON 404", async () => {
    for (const path of ["/console/nope", "/console/keys/extra", "/console/receipts/not-a-receipt", "/console/assets/index-nothere.js", "/console/assets/", "/console/api/keys", "/consoles"]) {
      expectErrorShape(await call("GET", path), 404, "not_found");
    }
    expectErrorShape(await call("POST", "/console", { json: {} }), 404, "not_found");
    expectErrorShape(await call("DELETE", "/console/keys"), 404, "not_found");
  });

  test("the console routes are not in the OpenAPI document (they are not API)", async () => {
    const doc = await call("GET", "/openapi.json");
    expect(Object.keys(doc.body.paths).filter((p) => p.startsWith("/console"))).toEqual([]);
  });
});

describe("assets", () => {
  test("content-hashed names, a year-long immutable cache, the right types", async () => {
    expect(chunkPaths.map((p) => p.replace(/-[a-z0-9]{8}\.js$/, ""))).toEqual(["/console/assets/code-editor"]);
    for (const path of [...assetPaths, ...chunkPaths]) {
      expect(path).toMatch(/^\/console\/assets\/[\w.-]+-[a-z0-9]{8}\.(js|css)$/);
      const reply = await call("GET", path);
      expect(reply.status).toBe(200);
      expect(reply.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(reply.headers.get("content-type")).toBe(path.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8");
      expect(reply.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  test("gzip for clients that accept it, the same bytes once unpacked", async () => {
    const { service } = await testService();
    for (const path of [...assetPaths, ...chunkPaths]) {
      const plain = new Uint8Array(await (await service.handle(new Request(BASE + path))).arrayBuffer());
      const packed = await service.handle(new Request(BASE + path, { headers: { "accept-encoding": "gzip, deflate, br" } }));
      expect(packed.headers.get("content-encoding")).toBe("gzip");
      expect(packed.headers.get("vary")).toBe("accept-encoding");
      expect(new Uint8Array(gunzipSync(new Uint8Array(await packed.arrayBuffer())))).toEqual(plain);
    }
  });

  const gzipped = async (path: string) => gzipSync(new Uint8Array(await (await fetchAsset(path)).arrayBuffer()), { level: 9 }).length;

  test(`what every page loads is under ${BUDGET_BYTES / 1024} KB gzipped; the code editor's chunk under ${EDITOR_BUDGET_BYTES / 1024} KB`, async () => {
    let total = gzipSync(html, { level: 9 }).length;
    const sizes: Record<string, number> = {};
    for (const path of assetPaths) {
      sizes[path] = await gzipped(path);
      total += sizes[path];
    }
    const editor = await gzipped(chunkPaths[0]);
    console.log(`console bundle: ${(total / 1024).toFixed(1)} KB gzipped, the code editor ${(editor / 1024).toFixed(1)} KB more`, sizes);
    expect(total).toBeLessThan(BUDGET_BYTES);
    expect(editor).toBeLessThan(EDITOR_BUDGET_BYTES);
  });

  test("the bundle makes no third-party requests: no absolute URL it could load from", async () => {
    for (const path of [...assetPaths, ...chunkPaths]) {
      const text = await (await fetchAsset(path)).text();
      // Namespace URIs (SVG, XHTML, MathML) are identifiers, never fetched.
      const urls = [...text.matchAll(/https?:\/\/[^\s"'`)]+/g)].map((m) => m[0]).filter((u) => !/^http:\/\/www\.w3\.org\//.test(u));
      expect(urls).toEqual([]);
      expect(text).not.toMatch(/@import|url\(\s*["']?(?:https?:)?\/\//);
    }
  });

  test("a missing or unreadable build reads as no console (answered 404, never a crash)", async () => {
    expect(await loadConsoleAssets(async () => new Map())).toBeUndefined();
    expect(await loadConsoleAssets(async () => Promise.reject(new Error("ENOENT")))).toBeUndefined();
    // A service built while the source is empty: the console says it is not built, the API works.
    const { db } = await testService();
    const lines: string[] = [];
    const previous = consoleSource();
    useConsoleSource(async () => new Map());
    const bare = await createService(testConfig(), { db, log: createLogger("info", (l) => lines.push(l)) }).finally(() => useConsoleSource(previous));
    try {
      const reply = await call("GET", "/console/keys", { service: bare });
      expectErrorShape(reply, 404, "not_found");
      expect(reply.body.message).toContain("npm run build:console");
      expect(lines.some((l) => l.includes('"console_not_built"'))).toBe(true);
      expect((await call("GET", "/health", { service: bare })).status).toBe(200);
    } finally {
      await bare.close();
    }
  });
});

async function fetchAsset(path: string): Promise<Response> {
  const { service } = await testService();
  return service.handle(new Request(BASE + path));
}

describe("client helpers", () => {
  test("the chart's scale tops at 2, 4, 6, 8 or 10 times a power of ten, so its middle is whole too", () => {
    const tops = [0, 1, 2, 3, 5, 7, 10, 11, 45, 99, 100, 101, 999, 1000, 1001, 123_456].map(scaleTop);
    expect(tops).toEqual([2, 2, 2, 4, 6, 8, 10, 20, 60, 100, 100, 200, 1000, 1000, 2000, 200_000]);
  });

  test("the chart's dates: the day of the month, with the month's name first and where a month starts", () => {
    expect(dayLabels(["2026-01-30", "2026-01-31", "2026-02-01", "2026-02-02"])).toEqual([{ day: "30", month: "Jan" }, { day: "31" }, { day: "1", month: "Feb" }, { day: "2" }]);
  });

  test("the dashboard's command names the server and the key, never a label, and -k only for this machine", () => {
    const key = { key_id: "key_ZK283D9OcUEGO2XRVevuDW", hint: "CKWK" };
    const remote = protectSnippet("https://warden.example.com", key);
    expect(remote).toContain("curl -s https://warden.example.com/v1/protect \\");
    expect(remote).toContain("key_ZK283D9OcUEGO2XRVevuDW (it ends in …CKWK)");
    expect(remote).toContain(`"x-api-key: $WARDEN_API_KEY"`);
    expect(remote).toContain("curl -s ");
    expect(remote).not.toContain("curl -sk");
    for (const origin of ["https://127.0.0.1:8443", "https://localhost:8443", "https://[::1]:8443"]) {
      expect(protectSnippet(origin, key)).toContain(`curl -sk ${origin}/v1/protect`);
    }
  });

  test("pageOf names exactly the console's pages", () => {
    expect(pageOf("")).toEqual({ page: "home" });
    expect(pageOf("keys")).toEqual({ page: "keys" });
    expect(pageOf("keys/")).toEqual({ page: "keys" });
    expect(pageOf("receipts/rcpt_abc123")).toEqual({ page: "receipt", id: "rcpt_abc123" });
    expect(pageOf("approvals/apv_abc123")).toEqual({ page: "approval", id: "apv_abc123" });
    for (const bad of ["assets", "keys/x", "receipts/abc", "receipts/rcpt_../x", "approvals/rcpt_abc", "approvals/apv_../x", "../keys", "Keys", "constructor", "__proto__"]) expect(pageOf(bad)).toBeUndefined();
  });
});
