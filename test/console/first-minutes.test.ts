// What a new customer meets in the console's first minutes, in Chromium (./chromium.ts): an unknown
// path answered by the console's own page, the dashboard's next step (a command that works as
// copied), the 14-day chart's scale and dates, toasts that never cover the page and confirmation
// dialogs whose sentences are whole, the receipt export, a failed policy test that says what it
// expected, the note before the first publish changes the policy's id, and recovery codes shown
// whole, with Copy and Download. Screenshots go to test/artifacts/first-*.png.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Locator, Page } from "playwright-core";
import { generate } from "otplib";
import { SMALL_PAYMENT } from "../helpers/customer.ts";
import { uniqueEmail } from "../helpers/service.ts";
import { planSetAsApproved, testQuery } from "../helpers/sql.ts";
import { chromiumAvailable, codeEditor, expectOnlyOwnOrigin, insecure, openConsoleInBrowser, testChromiumInstalled, type ConsoleInBrowser } from "./chromium.ts";

const STEP_MS = 90_000;

type Box = { x: number; y: number; width: number; height: number };
const overlap = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
const boxOf = async (locator: Locator): Promise<Box> => {
  const box = await locator.boundingBox();
  if (!box) throw new Error(`no box: ${locator}`);
  return box;
};

testChromiumInstalled();

describe.skipIf(!chromiumAvailable)("the console's first minutes, in Chromium", () => {
  let run: ConsoleInBrowser;
  let page: Page;
  const user = { email: uniqueEmail("first"), password: "a lantern by the quay", tenantId: "", apiKey: "", token: "" };

  /** A call of the JSON API as the signed-up customer (outside the browser). */
  const asUser = async (method: string, path: string, json?: unknown) => {
    const headers: Record<string, string> = { authorization: `Bearer ${user.token}` };
    if (json !== undefined) headers["content-type"] = "application/json";
    const reply = await fetch(run.origin + path, { ...insecure, method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
    return { status: reply.status, body: (await reply.json()) as any };
  };
  const protect = async (input: unknown = SMALL_PAYMENT) => {
    const reply = await fetch(`${run.origin}/v1/protect`, { ...insecure, method: "POST", headers: { "content-type": "application/json", "x-api-key": user.apiKey }, body: JSON.stringify(input) });
    expect(reply.status).toBe(200);
    return (await reply.json()) as { receipt_id: string; decision: string };
  };
  const goTo = async (label: string, title: string) => {
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: label, exact: true }).click();
    await run.heading(title);
  };
  /** The toast says `text`, in a line of its own above the page, clear of each of `targets`. */
  const toastClearOf = async (text: string | RegExp, ...targets: Locator[]) => {
    const toast = page.locator('[data-testid="status"]', { hasText: text });
    await toast.waitFor();
    const box = await boxOf(toast);
    const main = await boxOf(page.locator("main"));
    expect(box.y + box.height).toBeLessThanOrEqual(main.y + 0.5);
    for (const target of targets) expect(overlap(box, await boxOf(target))).toBe(false);
  };
  /** The dialog's `sentence` is on screen within the dialog's box, nothing of it scrolled or cut off. */
  const expectWhole = async (dialog: Locator, sentence: string) => {
    const outside = await dialog.evaluate((d, sentence) => {
      const box = d.getBoundingClientRect();
      const walker = document.createTreeWalker(d, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.textContent!.indexOf(sentence);
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + sentence.length);
        const cut = [...range.getClientRects()].filter((r) => r.left < box.left || r.right > box.right || r.top < box.top || r.bottom > box.bottom).length;
        return { found: true, cut, overflow: Math.max(0, d.scrollWidth - d.clientWidth) };
      }
      return { found: false, cut: 0, overflow: 0 };
    }, sentence);
    expect(outside).toEqual({ found: true, cut: 0, overflow: 0 });
  };

  beforeAll(async () => {
    run = await openConsoleInBrowser("first");
    page = run.page;
    const reply = await fetch(`${run.origin}/auth/signup`, { ...insecure, method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: user.email, password: user.password }) });
    expect(reply.status).toBe(201);
    const body = (await reply.json()) as { token: string; tenant_id: string; api_key: string };
    Object.assign(user, { token: body.token, tenantId: body.tenant_id, apiKey: body.api_key });
  }, 120_000);

  afterAll(() => run?.close(), 60_000);

  test(
    "an unknown console path is the console's own page-not-found page (404, HTML), with a way back",
    async () => {
      const reply = await page.goto(`${run.origin}/console/nope`);
      expect(reply!.status()).toBe(404);
      expect(reply!.headers()["content-type"]).toBe("text/html; charset=utf-8");
      await run.heading("Page not found");
      await run.seen('[data-testid="not-found"] code', "/console/nope");
      await run.shot("01-not-found");
      await page.getByRole("link", { name: "Back to the console" }).click();
      await run.heading("Log in");
      await page.getByLabel("Email").fill(user.email);
      await page.getByLabel("Password").fill(user.password);
      await page.getByRole("button", { name: "Log in" }).click();
      await run.heading("Dashboard");
    },
    STEP_MS,
  );

  test(
    "dashboard: the next step is a command for this server and the newest active key that works as copied; the chart has a scale and dates",
    async () => {
      const { body } = await asUser("GET", "/customer/keys");
      const first = body.keys[0] as { key_id: string; hint: string };
      const snippet = page.getByTestId("next-step-snippet");
      await snippet.waitFor();
      const text = (await snippet.textContent())!;
      expect(text).toContain(`curl -sk ${run.origin}/v1/protect`);
      expect(text).toContain(`${first.key_id} (it ends in …${first.hint})`);
      expect(text).not.toContain(user.apiKey);
      await page.getByTestId("next-step").getByRole("button", { name: "Copy" }).click();
      await page.getByTestId("next-step").getByRole("button", { name: "Copied" }).waitFor();
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      expect(copied).toBe(text);
      // The toast, above the page: even with the page scrolled to the button, it covers nothing.
      await toastClearOf("Command copied", snippet, page.locator("figure.chart"));

      // The command as copied, in a shell, with the key's secret: a decision with its receipt.
      // (Not spawnSync: the server answering it runs in this process.)
      const shell = Bun.spawn(["bash", "-c", copied], { env: { ...process.env, WARDEN_API_KEY: user.apiKey }, stdout: "pipe" });
      const output = await new Response(shell.stdout).text();
      expect(await shell.exited).toBe(0);
      const decision = JSON.parse(output) as { decision: string; receipt_id: string };
      expect(decision).toMatchObject({ decision: "ALLOWED", receipt_id: expect.stringMatching(/^rcpt_/) });

      // Five more: six protect calls today, so the scale tops at 6 with 3 in the middle, and
      // today's bar reaches the top line.
      for (let i = 0; i < 5; i++) await protect();
      await page.getByRole("button", { name: "Refresh" }).click();
      await run.seen('[data-testid="chart-scale"] li.top', /^6$/);
      await expect(page.getByTestId("chart-scale").locator("li").allTextContents()).resolves.toEqual(["6", "3", "0"]);
      await expect(page.locator("figure.chart rect.protect").last().getAttribute("y")).resolves.toBe("1");
      await expect(page.locator("figure.chart line.grid").count()).resolves.toBe(2);
      // Dates: fourteen days, the first with its month's name.
      const days = page.getByTestId("chart-days").locator("li");
      await expect(days.count()).resolves.toBe(14);
      expect(await days.first().textContent()).toMatch(/^\d{1,2}(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)$/);
      await run.shot("02-dashboard");
    },
    STEP_MS,
  );

  test(
    "keys: the toast clears the page, Rotate and Revoke stand apart, and their dialogs' sentences are whole",
    async () => {
      await goTo("Keys", "API keys");
      await page.getByLabel("Label").fill("ci bot");
      await page.getByRole("button", { name: "Create key" }).click();
      const reveal = page.getByTestId("secret-reveal");
      await reveal.waitFor();
      const row = page.locator("tr", { hasText: "ci bot" });
      await row.waitFor();
      await toastClearOf("Key ci bot created", reveal, page.getByTestId("keys-table"));
      await reveal.getByRole("button", { name: "I have stored it" }).click();

      const rotate = await boxOf(row.getByRole("button", { name: "Rotate" }));
      const revoke = await boxOf(row.getByRole("button", { name: "Revoke" }));
      // Side by side or stacked (the keys table stacks its buttons to stay within its panel): a gap either way.
      expect(Math.max(revoke.x - (rotate.x + rotate.width), revoke.y - (rotate.y + rotate.height))).toBeGreaterThanOrEqual(4);

      const dialog = page.getByRole("dialog");
      await row.getByRole("button", { name: "Rotate" }).click();
      await expectWhole(dialog, "A new secret replaces this one, with the same label and restrictions. Update everything that uses it.");
      await run.shot("03-keys-confirm-rotate");
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });
      await row.getByRole("button", { name: "Revoke" }).click();
      await expectWhole(dialog, "This cannot be undone.");
      await run.shot("04-keys-confirm-revoke");
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });

      // The dashboard's command names the newest active key; once it is revoked, the one before.
      const keyId = (await row.getAttribute("data-key-id"))!;
      await goTo("Dashboard", "Dashboard");
      await run.seen('[data-testid="next-step-snippet"]', keyId);
      await goTo("Keys", "API keys");
      await row.getByRole("button", { name: "Revoke" }).click();
      await dialog.getByRole("button", { name: "Revoke key" }).click();
      await row.locator(".badge.revoked").waitFor();
      await goTo("Dashboard", "Dashboard");
      const { body } = await asUser("GET", "/customer/keys");
      const active = (body.keys as { key_id: string; status: string }[]).find((k) => k.status === "active")!;
      await run.seen('[data-testid="next-step-snippet"]', active.key_id);
    },
    STEP_MS,
  );

  test(
    "receipts: the export is a disabled button with the plan it needs on Free, and downloads every receipt as NDJSON on Pro",
    async () => {
      await goTo("Receipts", "Receipts");
      const button = page.getByRole("button", { name: "Download all (NDJSON)" });
      await run.seen('[data-testid="export-plan"]', "pro");
      await expect(button.isDisabled()).resolves.toBe(true);
      await expect(page.getByTestId("export-plan").getByRole("link", { name: "Plans and upgrades" }).count()).resolves.toBe(1);
      await run.shot("05-receipts-export-free");

      await planSetAsApproved(run.server.service.deps.db, user.tenantId, "pro");
      await page.reload();
      await run.heading("Receipts");
      await page.getByTestId("receipts-table").waitFor();
      await expect(page.getByTestId("export-plan").count()).resolves.toBe(0);
      const [download] = await Promise.all([page.waitForEvent("download"), button.click()]);
      expect(download.suggestedFilename()).toBe(`receipts-${user.tenantId}.ndjson`);
      const lines = readFileSync((await download.path())!, "utf8").trimEnd().split("\n");
      const { body } = await asUser("GET", "/customer/receipts?limit=100");
      expect(lines.map((l) => JSON.parse(l).receipt_id)).toEqual((body.receipts as { receipt_id: string }[]).map((r) => r.receipt_id).reverse());
      await toastClearOf("Receipts downloaded", page.getByTestId("receipts-table"));
      await run.shot("06-receipts-export-pro");
    },
    STEP_MS,
  );

  test(
    "policy: before the first publish the page says the id becomes pol_<account> v2; a failed test shows what it expected",
    async () => {
      const own = `pol_${user.tenantId.slice("cust_".length)}`;
      await goTo("Policy", "Policy");
      await run.loaded(page.getByTestId("policy-version"), "the policy");
      await expect(page.getByTestId("policy-version").textContent()).resolves.toBe("pol_default v1");
      const note = page.getByTestId("first-publish-note");
      await expect(note.textContent()).resolves.toContain(`${own} version 2`);

      const cases = [
        { name: "a payment of 250 is denied", input: SMALL_PAYMENT, expect: { decision: "DENIED", reason: "amount_over_100" } },
        { name: "a drop is denied", input: { action: "database.drop", resource: "prod/main" }, expect: { decision: "DENIED" } },
      ];
      await codeEditor(page, "cases").ready();
      await page.getByLabel("Test cases (JSON)").fill(JSON.stringify(cases, null, 2));
      await page.getByRole("button", { name: "Run tests" }).click();
      const failed = page.locator('[data-testid="test-results"] tr[data-passed="false"]');
      await failed.waitFor();
      await expect(failed.locator('td[data-label="Decision"]').textContent()).resolves.toBe("ALLOWEDexpected DENIED");
      await expect(failed.locator('td[data-label="Reason"] [data-testid="expected"]').textContent()).resolves.toBe("expected amount_over_100");
      // The case names no rule: nothing expected there. A passing case shows no expectation.
      await expect(failed.locator('td[data-label="Rule"] [data-testid="expected"]').count()).resolves.toBe(0);
      await expect(page.locator('[data-testid="test-results"] tr[data-passed="true"] [data-testid="expected"]').count()).resolves.toBe(0);
      await run.shot("07-policy-test-expected");

      // A publish refused by the saved suite shows the saved cases' expectations too.
      await page.getByRole("button", { name: "Save tests" }).click();
      await page.getByTestId("unsaved-cases").waitFor({ state: "detached" });
      await page.getByRole("button", { name: "Preview impact" }).click();
      await page.getByTestId("impact").waitFor();
      await page.getByRole("button", { name: "Publish new version" }).click();
      await run.seen('[data-testid="test-results"] caption', "Saved tests under this draft");
      await expect(failed.locator('td[data-label="Decision"] [data-testid="expected"]').textContent()).resolves.toBe("expected DENIED");

      // As the note said: the first publish is the account's own id, version 2, and the note goes.
      expect((await asUser("PUT", "/customer/policy/tests", { cases: [] })).status).toBe(200);
      const active = await asUser("GET", "/customer/policy");
      const published = await asUser("PUT", "/customer/policy", { document: active.body.document });
      expect(published.body).toMatchObject({ policy_id: own, version: 2 });
      await page.reload();
      await run.seen('[data-testid="policy-version"]', `${own} v2`);
      await expect(note.count()).resolves.toBe(0);
    },
    STEP_MS,
  );

  test(
    "account: the recovery codes span the page, each whole on one line (also at phone width), with Copy and Download",
    async () => {
      await goTo("Account", "Account");
      await page.getByRole("button", { name: "Set up two-step sign-in" }).click();
      const secret = (await page.getByTestId("mfa-secret").textContent())!;
      await page.getByLabel("Code from your app").fill(await generate({ secret }));
      await page.getByRole("button", { name: "Turn on" }).click();
      const recovery = page.getByTestId("mfa-recovery");
      await recovery.waitFor();
      const codes = await recovery.locator("li").allTextContents();
      expect(codes).toHaveLength(10);

      /** Lines each code takes, and how far any sticks out of its box. */
      const layout = () =>
        recovery.locator("li").evaluateAll((items) =>
          items.map((li) => {
            const range = document.createRange();
            range.selectNodeContents(li);
            const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
            return { lines, overflow: Math.max(0, li.scrollWidth - li.clientWidth) };
          }),
        );
      expect(await layout()).toEqual(codes.map(() => ({ lines: 1, overflow: 0 })));
      // The panel takes the page's width, not the narrow column of the password form.
      const panel = await boxOf(page.locator("section.panel", { has: recovery }));
      const password = await boxOf(page.locator("section.panel", { hasText: "Change password" }));
      expect(panel.width).toBeGreaterThan(password.width * 1.5);
      await run.shot("08-recovery-codes");

      await recovery.getByRole("button", { name: "Copy" }).click();
      await recovery.getByRole("button", { name: "Copied" }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(codes.join("\n"));
      const [download] = await Promise.all([page.waitForEvent("download"), recovery.getByRole("button", { name: "Download (.txt)" }).click()]);
      expect(download.suggestedFilename()).toBe("warden-recovery-codes.txt");
      const file = readFileSync((await download.path())!, "utf8").split("\n");
      expect(file[0]).toContain(user.email);
      for (const code of codes) expect(file).toContain(code);

      await page.setViewportSize({ width: 390, height: 844 });
      try {
        expect(await layout()).toEqual(codes.map(() => ({ lines: 1, overflow: 0 })));
        expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
        await run.shot("09-phone-recovery-codes");
        await recovery.getByRole("button", { name: "I have stored them" }).click();
        for (const [label, title] of [["Dashboard", "Dashboard"], ["Receipts", "Receipts"], ["Policy", "Policy"]] as const) {
          await goTo(label, title);
          await page.waitForLoadState("networkidle");
          expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
          await run.shot(`10-phone-${label.toLowerCase()}`);
        }
      } finally {
        await page.setViewportSize({ width: 1100, height: 800 });
      }
    },
    STEP_MS,
  );

  test("only the service's own origin was contacted, with no CSP violation or script error", () => {
    expectOnlyOwnOrigin(run);
    expect(run.logLines.filter((l) => l.includes(user.apiKey))).toEqual([]);
  });
});
