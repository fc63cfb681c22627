// A console in Chromium for the browser tests: a real HTTPS server (serve(), self-signed
// certificate, a temporary DATA_DIR; PostgreSQL when TEST_DATABASE_URL is set) whose mail goes to
// an SMTP server started here, and Debian's Chromium driven by playwright-core.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Locator, Page } from "playwright-core";
import { buildConsole } from "../../src/console/build.ts";
import { serve } from "../../src/app/server.ts";
import type { Config } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";
import { startInbox, type Inbox } from "../helpers/mail.ts";
import { keepPlaywrightMessagesInOrder } from "../helpers/playwright.ts";
import { testConfig } from "../helpers/service.ts";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
export const chromiumAvailable = existsSync(CHROMIUM);
export const ARTIFACTS = join(import.meta.dir, "..", "artifacts");
export const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

/** Without Chromium: a failure in CI (CI or CI_SUITE set), a skip with a message otherwise. */
export function testChromiumInstalled(): void {
  test("Chromium is installed for the browser tests", () => {
    if (chromiumAvailable) return;
    const message = `console browser tests need Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`;
    if (process.env.CI || process.env.CI_SUITE) throw new Error(message);
    console.warn(`SKIPPED: ${message}`);
  });
}

export interface ConsoleInBrowser {
  origin: string;
  server: Awaited<ReturnType<typeof serve>>;
  inbox: Inbox;
  context: BrowserContext;
  page: Page;
  /** Every URL the browser asked for, every CSP report, every uncaught script error, every log line. */
  requests: string[];
  cspViolations: string[];
  pageErrors: string[];
  logLines: string[];
  /** A full-page screenshot in test/artifacts/, named `<prefix>-<name>.png`. */
  shot: (name: string) => Promise<unknown>;
  /** Waits until the page's h1 reads `title`. */
  heading: (title: string | RegExp) => Promise<void>;
  /** Waits until an element matching `selector` (with `text`, when given) is visible. */
  seen: (selector: string, text?: string | RegExp) => Promise<void>;
  /**
   * Waits for what a page shows once its data has loaded; if it never does, writes what the page
   * showed, the requests still open or failed and the server's last log lines to
   * test/artifacts/<prefix>-stalled.txt (.ci/run prints it after a failed suite), then fails.
   */
  loaded: (locator: Locator, what: string) => Promise<void>;
  close: () => Promise<void>;
}

/** How long a page may take to show its data: generous, as a loaded CI machine may need it. */
const LOAD_MS = 45_000;

/** `config` overrides the test server's configuration (webhook delivery, for one). */
export async function openConsoleInBrowser(prefix: string, overrides: Partial<Config> = {}): Promise<ConsoleInBrowser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  // The assets the server reads: npm test builds them first (pretest); a direct `bun test` too.
  await buildConsole();
  const inbox = await startInbox();
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  const origin = `https://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), "warden-console-"));
  const logLines: string[] = [];
  const config = testConfig({ port, host: "127.0.0.1", dataDir, publicUrl: origin, smtpUrl: inbox.url, mailPollMs: 50, databaseUrl: process.env.TEST_DATABASE_URL || undefined, ...overrides });
  const server = await serve(config, { log: createLogger("info", (line) => logLines.push(line)) });

  const { chromium } = await import("playwright-core");
  keepPlaywrightMessagesInOrder(chromium);
  const userDataDir = mkdtempSync(join(tmpdir(), "warden-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    ignoreHTTPSErrors: true,
    acceptDownloads: true,
    viewport: { width: 1100, height: 800 },
  });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  const requests: string[] = [];
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];
  context.on("request", (r) => requests.push(r.url()));
  // Requests with when they were sent and how they ended, for loaded()'s report.
  const traffic = new Map<object, { url: string; method: string; sent: number; ended?: string }>();
  context.on("request", (r) => traffic.set(r, { url: r.url(), method: r.method(), sent: Date.now() }));
  context.on("requestfinished", (r) => {
    const t = traffic.get(r);
    if (t) void r.response().then((a) => (t.ended = `${a?.status() ?? "?"} after ${Date.now() - t.sent} ms`), () => (t.ended = "finished"));
  });
  context.on("requestfailed", (r) => {
    const t = traffic.get(r);
    if (t) t.ended = `failed (${r.failure()?.errorText}) after ${Date.now() - t.sent} ms`;
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(20_000);
  page.on("console", (m) => {
    // With where it happened: a script's file, line and column, or the page's URL.
    if (m.type() === "error" && /Content Security Policy/i.test(m.text())) {
      const at = m.location();
      // Chromium's own editing, not the page: deleting across lines in a contenteditable (the code
      // editor) makes it write style attributes to keep the merged text's look, which the CSP
      // refuses (harmlessly: CodeMirror draws the line again). Such a report has no script and no
      // line; one from the console's markup or scripts has them.
      if (/^Applying inline style violates/.test(m.text()) && !at.lineNumber && (at.url === "" || at.url === page.url())) return;
      cspViolations.push(`${m.text()} (at ${at.url}${at.lineNumber ? `:${at.lineNumber}:${at.columnNumber}` : ""})`);
    }
  });
  page.on("pageerror", (e) => pageErrors.push(String(e)));

  return {
    origin,
    server,
    inbox,
    context,
    page,
    requests,
    cspViolations,
    pageErrors,
    logLines,
    shot: (name) => page.screenshot({ path: join(ARTIFACTS, `${prefix}-${name}.png`), fullPage: true }),
    heading: (title) => page.getByRole("heading", { level: 1, name: title }).waitFor(),
    seen: (selector, text) => page.locator(selector, text === undefined ? {} : { hasText: text }).first().waitFor(),
    loaded: async (locator, what) => {
      try {
        await locator.waitFor({ timeout: LOAD_MS });
      } catch (error) {
        const main = await page.locator("main").innerHTML({ timeout: 1000 }).catch((e) => `(unreadable: ${e})`);
        const recent = [...traffic.values()].slice(-20).map((t) => `${t.method} ${t.url}: ${t.ended ?? `open for ${Date.now() - t.sent} ms`}`);
        const report = [`${what} did not show within ${LOAD_MS} ms at ${page.url()}`, "", "main:", main.slice(0, 4000), "", "requests:", ...recent, "", "server log:", ...logLines.slice(-30).map((l) => l.slice(0, 500))].join("\n");
        writeFileSync(join(ARTIFACTS, `${prefix}-stalled.txt`), report);
        console.error(report);
        throw error;
      }
    },
    close: async () => {
      await context.close().catch(() => {});
      await server.stop();
      await inbox.close();
      for (const dir of [dataDir, userDataDir]) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** No request left the service's origin, no CSP report, no script error. */
export function expectOnlyOwnOrigin(run: ConsoleInBrowser): void {
  expect(run.requests.filter((u) => !u.startsWith(run.origin + "/") && !u.startsWith("data:") && !u.startsWith("blob:"))).toEqual([]);
  expect(run.cspViolations).toEqual([]);
  expect(run.pageErrors).toEqual([]);
}

/**
 * The policy editor's code editor for one field ("document" or "cases"), once it has loaded: its
 * text box (named by its label), its lines, and its whole text as a person would copy it (the
 * editor draws only the lines in view, so the text is read through the clipboard).
 */
export function codeEditor(page: Page, field: "document" | "cases") {
  const root = page.getByTestId(`${field}-editor`);
  const box = root.locator(".cm-content");
  return {
    root,
    box,
    ready: () => root.locator(".cm-editor").waitFor(),
    /** Line `n` as drawn: the editor draws the lines in view, so this counts from the top of a text scrolled to its start. */
    line: (n: number) => root.locator(".cm-line").nth(n - 1),
    /** The cursor and the view to the start of the text. */
    home: async () => {
      await box.focus();
      await page.keyboard.press("Control+Home");
    },
    /** The line number the cursor is on, as the gutter highlights it. */
    caretLine: async () => Number(await root.locator(".cm-lineNumbers .cm-activeLineGutter").textContent()),
    text: async () => {
      await box.focus();
      await page.keyboard.press("Control+a");
      await page.keyboard.press("Control+c");
      // Leave the text as it was: the cursor back at the start, nothing selected.
      await page.keyboard.press("Control+Home");
      return page.evaluate(() => navigator.clipboard.readText());
    },
  };
}
