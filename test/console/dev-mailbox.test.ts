// The development mailbox in a real browser: a server with no SMTP_URL (mail to DATA_DIR/outbox),
// a person signs up, follows the verification banner to /console/mailbox and verifies with the
// link shown there. Chromium as in browser.test.ts; without it, skipped locally, failed in CI.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { serve } from "../../src/app/server.ts";
import { buildConsole } from "../../src/console/build.ts";
import { createLogger } from "../../src/log.ts";
import { keepPlaywrightMessagesInOrder } from "../helpers/playwright.ts";
import { testConfig, testService, uniqueEmail } from "../helpers/service.ts";
import { devCertificate } from "../security/helpers.ts";

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const IN_CI = !!(process.env.CI || process.env.CI_SUITE);
const available = existsSync(CHROMIUM);

test("Chromium is installed for the mailbox's browser test", () => {
  if (available) return;
  const message = `the development mailbox's browser test needs Chromium at ${CHROMIUM} (or set CHROMIUM_PATH)`;
  if (IN_CI) throw new Error(message);
  console.warn(`SKIPPED: ${message}`);
});

describe.skipIf(!available)("the development mailbox in Chromium", () => {
  let server: Awaited<ReturnType<typeof serve>>;
  let context: BrowserContext;
  let page: Page;
  let dataDir: string;
  let userDataDir: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    await buildConsole();
    const { db } = await testService();
    const { cert, key } = await devCertificate();
    dataDir = mkdtempSync(join(tmpdir(), "warden-mailbox-"));
    // PUBLIC_URL is the server's own address, as it is by default, so the links open here.
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = probe.port;
    probe.stop(true);
    const config = testConfig({ port, host: "127.0.0.1", tlsCert: cert, tlsKey: key, dataDir, publicUrl: `https://127.0.0.1:${port}`, mailPollMs: 50 });
    server = await serve(config, { db, log: createLogger("silent") });

    const { chromium } = await import("playwright-core");
    keepPlaywrightMessagesInOrder(chromium);
    userDataDir = mkdtempSync(join(tmpdir(), "warden-chromium-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      ignoreHTTPSErrors: true,
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(20_000);
    page.on("pageerror", (e) => pageErrors.push(String(e)));
  }, 120_000);

  afterAll(async () => {
    await context?.close().catch(() => {});
    await server?.stop();
    for (const dir of [dataDir, userDataDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  test(
    "the bare address leads to the console; sign up, open the mailbox from the banner, verify with its link",
    async () => {
      await page.goto(`${server.url}/`);
      await page.waitForURL(/\/console\/login$/);
      await page.getByRole("link", { name: "Create an account" }).click();
      const email = uniqueEmail("mailbox");
      await page.getByLabel("Email").fill(email);
      await page.getByLabel("Password").fill("a quiet harbour at dawn");
      await page.getByRole("button", { name: "Create account" }).click();
      await page.waitForURL(/\/console\/dashboard$/);

      const banner = page.getByTestId("verify-banner");
      await banner.getByRole("link", { name: "development mailbox" }).click();
      await page.getByRole("heading", { level: 1, name: "Development mailbox" }).waitFor();
      // The worker writes the message a moment after signup: refresh until it is there.
      const message = page.getByTestId("dev-message").first();
      for (let i = 0; i < 100 && (await message.count()) === 0; i++) {
        await page.getByRole("button", { name: "Refresh" }).click();
        await Bun.sleep(100);
      }
      await expect(message.getByRole("heading", { level: 2 }).textContent()).resolves.toMatch(/confirm your email/i);
      const link = message.getByRole("link", { name: /\/console\/verify\?token=/ });
      expect(await link.getAttribute("href")).toStartWith(`${server.url}/console/verify?token=`);
      await link.click();
      await page.getByRole("button", { name: "Confirm my email address" }).click();
      await page.getByTestId("verified").waitFor();
      await banner.waitFor({ state: "detached" });
      expect(pageErrors).toEqual([]);
    },
    60_000,
  );

  test(
    "a brand-new invitee, signed out, finds the invitation in the mailbox from the login page and joins with its link",
    async () => {
      // The person of the first test invites someone who has no account.
      const token = await page.evaluate(() => sessionStorage.getItem("warden.session"));
      const newcomer = uniqueEmail("newcomer");
      const invited = await fetch(`${server.url}/customer/members/invitations`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ email: newcomer, role: "approver" }),
        tls: { rejectUnauthorized: false },
      } as RequestInit);
      expect(invited.status).toBe(201);

      const fresh = await context.newPage();
      fresh.setDefaultTimeout(20_000);
      fresh.on("pageerror", (e) => pageErrors.push(String(e)));
      await fresh.goto(`${server.url}/console/login`);
      await fresh.getByTestId("dev-mailbox-link").getByRole("link", { name: "development mailbox" }).click();
      await fresh.getByRole("heading", { level: 1, name: "Development mailbox" }).waitFor();
      const invitation = fresh.getByTestId("dev-message").filter({ hasText: newcomer }).first();
      for (let i = 0; i < 100 && (await invitation.count()) === 0; i++) {
        await fresh.getByRole("button", { name: "Refresh" }).click();
        await Bun.sleep(100);
      }
      await invitation.getByRole("link", { name: /\/console\/invitation\?token=/ }).click();
      await fresh.getByRole("heading", { level: 1, name: "Join a tenant" }).waitFor();
      await fresh.getByRole("button", { name: "Set password and join" }).waitFor();
      expect(pageErrors).toEqual([]);
      await fresh.close();
    },
    60_000,
  );
});
