// The console in a real browser (./chromium.ts): Debian's Chromium driven by playwright-core
// against a real HTTPS server whose mail goes to an SMTP server started there, so the links of the
// emails open in the browser. On the embedded database, or on PostgreSQL when TEST_DATABASE_URL
// is set. Screenshots of every page go to test/artifacts/ (ignored by git).
//
// Without Chromium: skipped with a message locally, a failure in CI (CI or CI_SUITE set).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { runOpsScript } from "../../src/ops/scripts.ts";
import { SMALL_PAYMENT } from "../helpers/customer.ts";
import { linkToken, type Inbox } from "../helpers/mail.ts";
import { uniqueEmail } from "../helpers/service.ts";
import { chromiumAvailable, codeEditor, expectOnlyOwnOrigin, insecure, openConsoleInBrowser, testChromiumInstalled, type ConsoleInBrowser } from "./chromium.ts";
import { generate, generateURI } from "otplib";
import { encode } from "uqr";

const STEP_MS = 90_000;

testChromiumInstalled();

describe.skipIf(!chromiumAvailable)("console in Chromium", () => {
  let run: ConsoleInBrowser;
  let inbox: Inbox;
  let server: ConsoleInBrowser["server"];
  let page: Page;
  let origin: string;
  const user = { email: uniqueEmail("console"), password: "a quiet harbour at dawn", apiKey: "", tenantId: "" };

  const shot = (name: string) => run.shot(name);
  const heading = (title: string | RegExp) => run.heading(title);
  const seen = (selector: string, text?: string | RegExp) => run.seen(selector, text);

  /** Every visible form control has a label (or an accessible name from aria). */
  const expectLabelled = async () => {
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll("input, select, textarea")]
        .filter((el) => !(el as HTMLInputElement).hidden && (el as HTMLInputElement).type !== "hidden")
        .filter((el) => !((el as HTMLInputElement).labels?.length || el.getAttribute("aria-label") || el.getAttribute("aria-labelledby")))
        .map((el) => el.outerHTML),
    );
    expect(unlabelled).toEqual([]);
  };

  const goTo = async (label: string, title: string | RegExp) => {
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: label, exact: true }).click();
    await heading(title);
    await expectLabelled();
  };

  beforeAll(async () => {
    run = await openConsoleInBrowser("console");
    ({ inbox, server, page, origin } = run);
  }, 120_000);

  afterAll(() => run?.close(), 60_000);

  test(
    "sign up, see the first key once, verify the email from the SMTP mail",
    async () => {
      const reply = await page.goto(`${origin}/console`);
      expect(reply?.headers()["content-security-policy"]).toContain("default-src 'self'");
      await page.waitForURL(/\/console\/login$/);
      await heading("Log in");
      await expectLabelled();
      // Keyboard: the first Tab reaches the skip link, with a visible focus ring.
      await page.keyboard.press("Tab");
      const focused = await page.evaluate(() => ({ text: document.activeElement?.textContent, outline: getComputedStyle(document.activeElement!).outlineStyle }));
      expect(focused).toEqual({ text: "Skip to content", outline: "solid" });
      await shot("01-login");

      await page.getByRole("link", { name: "Create an account" }).click();
      await heading("Create an account");
      // A short password is refused at the field, and the field says why.
      await page.getByLabel("Email").fill(user.email);
      await page.getByLabel("Password").fill("short");
      await page.getByRole("button", { name: "Create account" }).click();
      const password = page.getByLabel("Password");
      await seen('input[name="password"][aria-invalid="true"]');
      await seen(".field-error", "at least 8 characters");
      await expectLabelled();
      await shot("02-signup-error");
      // The server's refusal of a common password lands at the same field.
      await password.fill("password123");
      await page.getByRole("button", { name: "Create account" }).click();
      await seen(".field-error", /common/i);
      await page.locator('input[name="password"]:focus').waitFor();
      await password.fill(user.password);
      await page.getByRole("button", { name: "Create account" }).click();

      await page.waitForURL(/\/console\/dashboard$/);
      const reveal = page.getByTestId("secret-reveal");
      await reveal.waitFor();
      user.apiKey = await page.getByTestId("secret-value").inputValue();
      expect(user.apiKey).toMatch(/^warden_live_[A-Za-z0-9]{32}_[A-Za-z0-9]{6}$/);
      await expect(reveal.textContent()).resolves.toContain("shown only once");
      await page.getByTestId("verify-banner").waitFor();
      await page.getByTestId("plan").waitFor();
      await shot("03-dashboard-first-key");
      await reveal.getByRole("button", { name: "I have stored it" }).click();
      await expect(reveal.count()).resolves.toBe(0);

      // The verification mail arrives over SMTP; its link opens the console's verify page.
      const [mail] = await inbox.waitFor(user.email);
      const token = linkToken(mail, "/console/verify", origin);
      await page.goto(`${origin}/console/verify?token=${token}`);
      await heading("Verify your email address");
      await shot("04-verify");
      await page.getByRole("button", { name: "Confirm my email address" }).click();
      await page.getByTestId("verified").waitFor();
      // The token leaves the address bar, and the banner goes away.
      expect(page.url()).toBe(`${origin}/console/verify`);
      await page.getByTestId("verify-banner").waitFor({ state: "detached" });
      await shot("05-verified");
    },
    STEP_MS,
  );

  test(
    "dashboard: usage bars and the 14-day chart",
    async () => {
      await goTo("Dashboard", "Dashboard");
      // The heading comes before the dashboard's data: wait for it to render, then count.
      await page.getByRole("meter").first().waitFor();
      await expect(page.getByRole("meter").count()).resolves.toBe(3);
      await expect(page.locator("figure.chart rect.protect").count()).resolves.toBe(14);
      await expect(page.getByTestId("plan").textContent()).resolves.toBe("free");
      await shot("06-dashboard");
    },
    STEP_MS,
  );

  test(
    "keys: create (secret once, copy button, warning), then revoke with confirmation",
    async () => {
      await goTo("Keys", "API keys");
      await page.getByLabel("Label").fill("ci bot");
      await page.getByRole("button", { name: "Create key" }).click();
      const reveal = page.getByTestId("secret-reveal");
      await reveal.waitFor();
      const secret = await page.getByTestId("secret-value").inputValue();
      expect(secret).toMatch(/^warden_live_/);
      await expect(reveal.textContent()).resolves.toContain("It is shown only once");
      await reveal.getByRole("button", { name: "Copy" }).click();
      await reveal.getByRole("button", { name: "Copied" }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
      const row = page.locator("tr", { hasText: "ci bot" });
      await expect(row.locator("th").textContent()).resolves.toContain(`secret ends in …${secret.slice(-4)}`);
      await shot("07-keys-created");
      await reveal.getByRole("button", { name: "I have stored it" }).click();

      // The key works until it is revoked.
      const use = () => fetch(`${origin}/v1/simulate`, { ...insecure, method: "POST", headers: { "content-type": "application/json", "x-api-key": secret }, body: JSON.stringify({ preset: "small_payment" }) });
      expect((await use()).status).toBe(200);

      await row.getByRole("button", { name: "Revoke" }).click();
      const dialog = page.getByRole("dialog");
      await expect(dialog.textContent()).resolves.toContain("cannot be undone");
      // Escape cancels: nothing happens.
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });
      await expect(row.locator(".badge").textContent()).resolves.toBe("active");
      await row.getByRole("button", { name: "Revoke" }).click();
      await shot("08-keys-confirm-revoke");
      await dialog.getByRole("button", { name: "Revoke key" }).click();
      await row.locator(".badge.revoked").waitFor();
      await seen('[data-testid="status"]', "revoked");
      const after = await use();
      expect(after.status).toBe(401);
      expect((await after.json()).error).toBe("key_revoked");
      await shot("09-keys-revoked");
    },
    STEP_MS,
  );

  test(
    "keys for agents: edit (suspend, actions, metadata), lift the suspension, rotate keeping the old secret an hour",
    async () => {
      await page.getByLabel("Label").fill("agent");
      await page.getByRole("button", { name: "Create key" }).click();
      await page.getByTestId("secret-reveal").waitFor();
      const secret = await page.getByTestId("secret-value").inputValue();
      await page.getByTestId("secret-reveal").getByRole("button", { name: "I have stored it" }).click();
      const protect = async (key: string, action: string) => {
        const res = await fetch(`${origin}/v1/protect`, { ...insecure, method: "POST", headers: { "content-type": "application/json", "x-api-key": key }, body: JSON.stringify({ action }) });
        return { status: res.status, error: ((await res.json()) as { error?: string }).error };
      };
      const row = page.locator("tr", { hasText: "agent" });
      await expect(row.locator('td[data-label="Restrictions"]').textContent()).resolves.toBe("none");

      await row.getByRole("button", { name: "Edit" }).click();
      const editor = page.getByTestId("key-editor");
      await editor.getByLabel(/^Enabled/).uncheck();
      await editor.getByLabel("Actions it may ask about").fill("document.*");
      await editor.getByLabel("Metadata").fill("agent=reader");
      await shot("09a-keys-edit");
      await editor.getByRole("button", { name: "Save key" }).click();
      await editor.waitFor({ state: "hidden" });
      await row.getByText("suspended").waitFor();
      await expect(row.locator('td[data-label="Restrictions"]').textContent()).resolves.toContain("document.*");
      expect(await protect(secret, "document.read")).toMatchObject({ status: 401, error: "key_disabled" });

      await row.getByRole("button", { name: "Edit" }).click();
      await editor.getByLabel(/^Enabled/).check();
      await editor.getByLabel("Requests a second").fill("0");
      await editor.getByRole("button", { name: "Save key" }).click();
      await editor.getByText("A whole number from 1").waitFor(); // checked before anything is sent
      await editor.getByLabel("Requests a second").fill("");
      await editor.getByRole("button", { name: "Save key" }).click();
      await editor.waitFor({ state: "hidden" });
      await row.getByText("suspended").waitFor({ state: "detached" });
      expect(await protect(secret, "document.read")).toMatchObject({ status: 200 });
      expect(await protect(secret, "payment.send")).toMatchObject({ status: 403, error: "action_not_allowed" });

      await row.getByRole("button", { name: "Rotate" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Keep the current secret working").selectOption("3600");
      await dialog.getByRole("button", { name: "Rotate key" }).click();
      await page.getByTestId("secret-reveal").waitFor();
      const next = await page.getByTestId("secret-value").inputValue();
      await page.getByTestId("secret-reveal").getByRole("button", { name: "I have stored it" }).click();
      expect(await protect(secret, "document.read")).toMatchObject({ status: 200 });
      expect(await protect(next, "document.read")).toMatchObject({ status: 200 });
      await shot("09b-keys-overlap");
    },
    STEP_MS,
  );

  test(
    "receipts: a protect call made outside appears, and verifies in the browser (and fails against the wrong keys)",
    async () => {
      await goTo("Receipts", "Receipts");
      // The log so far: audit events only (the first key's at signup, the key made and revoked above), no decision yet.
      await page.locator('[data-testid="receipts-table"] td', { hasText: "key.revoked" }).waitFor();
      const reply = await fetch(`${origin}/v1/protect`, { ...insecure, method: "POST", headers: { "content-type": "application/json", "x-api-key": user.apiKey }, body: JSON.stringify(SMALL_PAYMENT) });
      expect(reply.status).toBe(200);
      const decision = (await reply.json()) as { receipt_id: string; decision: string };
      expect(decision.decision).toBe("ALLOWED");

      await page.getByRole("button", { name: "Refresh" }).click();
      const link = page.getByRole("link", { name: decision.receipt_id });
      await link.waitFor();
      await shot("10-receipts");
      await link.click();
      await page.waitForURL(new RegExp(`/console/receipts/${decision.receipt_id}$`));
      await seen("pre.json", '"payment.send"');

      // Verify: the browser fetches the JWKS, checkpoint and proof, and checks them itself.
      const before = run.requests.length;
      await page.getByRole("button", { name: "Verify in this browser" }).click();
      const result = page.getByTestId("verify-result");
      await result.waitFor();
      await expect(result.getAttribute("data-verified")).resolves.toBe("true");
      // The five checks of the log, and the decision made again under its policy version.
      await expect(page.locator("ul.checks li.pass").count()).resolves.toBe(6);
      await expect(page.locator("ul.checks li.pass", { hasText: "Decision" }).count()).resolves.toBe(1);
      const fetched = run.requests.slice(before).map((u) => new URL(u).pathname);
      expect(fetched.some((p) => p.startsWith("/customer/policy/versions/"))).toBe(true);
      expect(fetched).toContain("/.well-known/jwks.json");
      expect(fetched).toContain("/customer/receipts/checkpoint");
      expect(fetched).toContain(`/customer/receipts/${decision.receipt_id}/proof`);
      expect(fetched.some((p) => p.startsWith("/v1/verify"))).toBe(false);
      await shot("11-receipt-verified");

      // The same receipt against a JWKS whose key (same kid) is not the signer's: the signatures fail.
      const jwks = (await (await fetch(`${origin}/.well-known/jwks.json`, insecure)).json()) as { keys: { kid: string }[] };
      const other = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
      const { x } = await crypto.subtle.exportKey("jwk", other.publicKey);
      await page.route(`${origin}/.well-known/jwks.json`, (route) => route.fulfill({ json: { ok: true, keys: jwks.keys.map((k) => ({ ...k, x })) } }));
      await page.getByRole("button", { name: "Verify in this browser" }).click();
      await page.locator('[data-testid="verify-result"][data-verified="false"]').waitFor();
      await expect(page.locator("ul.checks li.fail").allTextContents()).resolves.toEqual([expect.stringContaining("Signature"), expect.stringContaining("Checkpoint")]);
      await shot("12-receipt-wrong-keys");
      await page.unroute(`${origin}/.well-known/jwks.json`);
      // A tampered proof path: the inclusion check fails.
      await page.route(`${origin}/customer/receipts/${decision.receipt_id}/proof*`, async (route) => {
        const real = await route.fetch();
        const body = await real.json();
        route.fulfill({ json: { ...body, leaf_hash: undefined, path: ["0x" + "ab".repeat(32), ...body.path] } });
      });
      await page.getByRole("button", { name: "Verify in this browser" }).click();
      await page.locator("ul.checks li.fail", { hasText: "Inclusion" }).waitFor();
      await page.unroute(`${origin}/customer/receipts/${decision.receipt_id}/proof*`);

      // An audit event (a key made above) verifies in the browser like a decision.
      await goTo("Receipts", "Receipts");
      await page.locator("tr", { hasText: "key.created" }).first().getByRole("link").click();
      await page.waitForURL(/\/console\/receipts\/rcpt_/);
      await seen("pre.json", '"key.created"');
      await page.getByRole("button", { name: "Verify in this browser" }).click();
      await page.locator('[data-testid="verify-result"][data-verified="true"]').waitFor();
      await expect(page.locator("ul.checks li.pass").count()).resolves.toBe(5);
    },
    STEP_MS,
  );

  test(
    "plan: request an upgrade, see it approved by the operator script; cancel one, see a rejection's note",
    async () => {
      await goTo("Policy", "Policy");
      await run.loaded(page.getByTestId("policy-version"), "the policy");
      await expect(page.getByTestId("policy-version").textContent()).resolves.toBe("pol_default v1");
      await expect(page.locator("textarea").count()).resolves.toBe(0);
      // Reads work on every plan: the versions are listed, with no restore.
      await page.locator('[data-testid="versions"] tr[data-version="1"].current').waitFor();
      await expect(page.getByRole("button", { name: "Restore" }).count()).resolves.toBe(0);
      await shot("13-policy-free");

      await goTo("Plan", "Plan");
      await expect(page.getByTestId("current-plan").textContent()).resolves.toBe("free");
      await page.getByLabel("Plan", { exact: true }).selectOption("pro");
      await page.getByLabel("Why do you need it? (optional)").fill("More daily decisions for our agents.");
      await page.getByRole("button", { name: "Request upgrade" }).click();
      const item = page.locator('[data-status="pending"]');
      await item.waitFor();
      await shot("14-plan-pending");
      const requestId = (await item.getAttribute("data-request-id"))!;

      // The operator approves with the sql/ops script, on the served instance's database.
      const [row] = await runOpsScript<{ status: string; plan: string }>(server.service.deps.db, "ops/upgrades_approve", { request_id: requestId, reviewer: "console-test" });
      expect(row).toMatchObject({ status: "approved", plan: "pro" });
      await page.getByRole("button", { name: "Refresh" }).click();
      await page.locator(`[data-request-id="${requestId}"][data-status="approved"]`).waitFor();
      await page.locator('[data-testid="current-plan"]', { hasText: "pro" }).waitFor();
      await shot("15-plan-approved");

      // Cancel a request (after confirming); a rejected one shows the reviewer's note.
      const ask = async (plan: string) => {
        await page.getByLabel("Plan", { exact: true }).selectOption(plan);
        await page.getByRole("button", { name: "Request upgrade" }).click();
        await seen('[data-status="pending"]');
        return (await page.locator('[data-status="pending"]').getAttribute("data-request-id"))!;
      };
      const cancelled = await ask("enterprise");
      await page.locator(`[data-request-id="${cancelled}"]`).getByRole("button", { name: "Cancel request" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Cancel request" }).click();
      await seen(`[data-request-id="${cancelled}"][data-status="cancelled"]`);
      const rejected = await ask("enterprise");
      await runOpsScript(server.service.deps.db, "ops/upgrades_reject", { request_id: rejected, reviewer: "console-test", note: "Tell us about your volume first." });
      await page.getByRole("button", { name: "Refresh" }).click();
      await seen(`[data-request-id="${rejected}"][data-status="rejected"] .review-note`, "Tell us about your volume first.");
      await shot("15b-plan-rejected");
    },
    STEP_MS,
  );

  test(
    "policy on Pro: draft with errors at their line, tests, impact, publish (refused while a saved test fails), diff, restore",
    async () => {
      const protectNow = async (input: unknown) => {
        const reply = await fetch(`${origin}/v1/protect`, { ...insecure, method: "POST", headers: { "content-type": "application/json", "x-api-key": user.apiKey }, body: JSON.stringify(input) });
        expect(reply.status).toBe(200);
        return (await reply.json()) as { receipt_id: string; decision: string; reasons: string[] };
      };
      // Stored decisions for the impact preview, besides the receipts test's payment of 250: one of 150, a read.
      const paid = await protectNow({ ...SMALL_PAYMENT, amount: 150 });
      expect(paid.decision).toBe("ALLOWED");
      await protectNow({ action: "document.read", resource: "docs/handbook" });

      await goTo("Policy", "Policy");
      await run.loaded(page.getByTestId("policy-version"), "the policy");
      await expect(page.getByTestId("policy-version").textContent()).resolves.toBe("pol_default v1");
      await page.locator('[data-testid="versions"] tr[data-version="1"].current').waitFor();
      // The code editors (CodeMirror, docs/console.md); test/console/policy-code-editor.test.ts drives their completion.
      const code = codeEditor(page, "document");
      await code.ready();
      await codeEditor(page, "cases").ready();
      const editor = page.getByLabel("Policy document (JSON)");
      const cases = page.getByLabel("Test cases (JSON)");
      const publish = page.getByRole("button", { name: "Publish new version" });
      const problem = (field: string, line: number) => page.locator(`[data-testid="${field}-problems"] li[data-line="${line}"]`);
      const lineNo = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;
      const focused = () => page.locator('[data-testid="document-editor"] .cm-content:focus').waitFor();

      // A JSON syntax error is marked at its line as it is typed; its button puts the cursor there.
      const doc = JSON.parse(await code.text());
      const original = structuredClone(doc);
      const broken = JSON.stringify(doc, null, 2).replace('"no_rule_matched",', '"no_rule_matched"');
      await editor.fill(broken);
      await problem("document", 4).filter({ hasText: "Not valid JSON" }).waitFor();
      // Filling leaves the view at the end of the text: back to its start to see the mark.
      await code.home();
      await code.line(4).locator(".cm-lintRange-error").waitFor();
      await expect(editor.getAttribute("aria-invalid")).resolves.toBe("true");
      await problem("document", 4).getByRole("button", { name: "Line 4" }).click();
      await focused();
      expect(await code.caretLine()).toBe(4);
      await expect(publish.isDisabled()).resolves.toBe(true);
      await shot("16a-policy-syntax-error");

      // A value the schema refuses: marked at its line as typed, with the path for people; the
      // service refuses it too when tests run, and the cursor goes there.
      doc.rules.unshift({ id: "deny_payment_over_100", effect: "maybe", reason: "amount_over_100", when: { actions: ["payment.*"], amount: { gt: 100 } } });
      const refused = JSON.stringify(doc, null, 2);
      await editor.fill(refused);
      const effectLine = lineNo(refused, '"effect": "maybe"');
      const effectProblem = problem("document", effectLine).filter({ hasText: 'rules[0].effect: must be "allow", "deny" or "require_approval"' });
      await effectProblem.and(page.locator('[data-source="browser"]')).waitFor();
      await page.getByRole("button", { name: "Run tests" }).click();
      await effectProblem.and(page.locator('[data-source="service"]')).waitFor();
      await focused();
      expect(await code.caretLine()).toBe(effectLine);
      await shot("16b-policy-schema-error");

      // The draft: payments over 100 are denied. One test still expects the old answer.
      doc.rules[0].effect = "deny";
      const draft = JSON.stringify(doc, null, 2);
      await editor.fill(draft);
      await page.locator('[data-testid="document-problems"]').waitFor({ state: "detached" });
      const suite = [
        { name: "payment of 250 is allowed", input: SMALL_PAYMENT, expect: { decision: "ALLOWED" } },
        { name: "dropping a database is denied", input: { action: "database.drop", resource: "prod/main" }, expect: { decision: "DENIED", reason: "destructive_action" } },
      ];
      await cases.fill(JSON.stringify(suite, null, 2));
      await page.getByRole("button", { name: "Run tests" }).click();
      await page.locator('[data-testid="test-results"][data-failed="1"]').waitFor();
      await seen('[data-testid="test-results"] tr[data-passed="false"]', "payment of 250 is allowed");
      await page.getByTestId("unsaved-cases").waitFor();
      await page.getByRole("button", { name: "Save tests" }).click();
      await page.getByTestId("unsaved-cases").waitFor({ state: "detached" });
      await shot("16c-policy-tests");

      // Impact before publish: the stored payments of 250 and 150 would flip to DENIED.
      await expect(publish.isDisabled()).resolves.toBe(true);
      await page.getByRole("button", { name: "Preview impact" }).click();
      await page.getByTestId("impact").waitFor();
      const count = async (key: string) => Number(await page.getByTestId(`impact-${key}`).textContent());
      expect(await count("evaluated")).toBeGreaterThanOrEqual(3);
      expect(await count("allowed_to_denied")).toBe(2);
      expect(await count("denied_to_allowed")).toBe(0);
      expect(await count("flips")).toBe(2);
      expect(await count("reason_changed")).toBe(0);
      const flipped = page.locator('[data-testid="impact-examples"] tbody tr', { hasText: paid.receipt_id });
      await expect(flipped.textContent()).resolves.toContain("amount_over_100");
      await expect(page.locator('[data-testid="impact-examples"] tbody tr').count()).resolves.toBe(2);
      await shot("16d-policy-impact");
      // An edit after the preview makes it stale: publish waits for a new one.
      await editor.fill(draft + "\n");
      await seen('[data-testid="impact"]', "preview again");
      await expect(publish.isDisabled()).resolves.toBe(true);
      await editor.fill(draft);
      await expect(publish.isDisabled()).resolves.toBe(false);

      // Publishing runs the saved suite: one case fails, nothing is published.
      await publish.click();
      await seen('[role="alert"]', /test/i);
      await page.locator('[data-testid="test-results"][data-failed="1"]').waitFor();
      await expect(page.getByTestId("policy-version").textContent()).resolves.toBe("pol_default v1");
      await shot("16e-policy-publish-refused");
      suite[0] = { name: "payment of 250 is denied", input: SMALL_PAYMENT, expect: { decision: "DENIED", reason: "amount_over_100" } } as (typeof suite)[number];
      await cases.fill(JSON.stringify(suite, null, 2));
      await page.getByRole("button", { name: "Save tests" }).click();
      await page.getByTestId("unsaved-cases").waitFor({ state: "detached" });
      await page.getByRole("button", { name: "Run tests" }).click();
      await page.locator('[data-testid="test-results"][data-failed="0"]').waitFor();
      await publish.click();
      await page.locator('[data-testid="policy-version"]', { hasText: "v2" }).waitFor();
      await seen('[data-testid="status"]', "version 2");
      await page.locator('[data-testid="versions"] tr[data-version="2"].current').waitFor();
      const v2 = (await page.getByTestId("policy-version").textContent())!;
      expect(v2).toMatch(/^pol_\S+ v2$/);
      expect((await protectNow(SMALL_PAYMENT)).decision).toBe("DENIED");
      await shot("16f-policy-published");

      // The diff of v1 and v2: the new rule added, nothing removed.
      await page.getByLabel("From version").selectOption("1");
      await page.getByLabel("To version").selectOption("2");
      await page.getByRole("button", { name: "Compare" }).click();
      const diff = page.getByTestId("policy-diff");
      await diff.waitFor();
      await expect(diff.locator("span.add", { hasText: '"id": "deny_payment_over_100"' }).count()).resolves.toBe(1);
      await expect(diff.locator("span.del").count()).resolves.toBe(0);
      await expect(page.getByTestId("rule-changes").textContent()).resolves.toBe("Rules added: deny_payment_over_100");
      await shot("16g-policy-diff");

      // Restore v1: refused while a saved test needs v2's answer, then done once the suite allows it.
      const restore = async () => {
        await page.locator('[data-testid="versions"] tr[data-version="1"]').getByRole("button", { name: "Restore" }).click();
        await page.getByRole("dialog").getByRole("button", { name: "Restore" }).click();
      };
      await restore();
      await seen('[role="alert"]', /test/i);
      await seen('[data-testid="test-results"] tr[data-passed="false"]', "payment of 250 is denied");
      await expect(page.getByTestId("policy-version").textContent()).resolves.toBe(v2);
      await cases.fill(JSON.stringify(suite.slice(1), null, 2));
      await page.getByRole("button", { name: "Save tests" }).click();
      await page.getByTestId("unsaved-cases").waitFor({ state: "detached" });
      await restore();
      await page.locator('[data-testid="policy-version"]', { hasText: "v3" }).waitFor();
      await page.locator('[data-testid="versions"] tr[data-version="3"].current').waitFor();
      // v3 is v1's document again: same hash, and the payment is allowed again.
      const hashes = await page.locator('[data-testid="versions"] tr[data-version] td.mono').evaluateAll((cells) => cells.map((c) => c.getAttribute("title")));
      expect(hashes[0]).toBe(hashes[2]);
      expect(hashes[0]).not.toBe(hashes[1]);
      await code.ready();
      expect(JSON.parse(await code.text())).toEqual(original);
      expect((await protectNow(SMALL_PAYMENT)).decision).toBe("ALLOWED");
      await shot("16h-policy-restored");
    },
    // The longest step: a dozen round trips, each waited for on screen.
    2 * STEP_MS,
  );

  test(
    "account: change the password (wrong current one refused at the field), log in again with the keyboard",
    async () => {
      await goTo("Account", "Account");
      await page.getByLabel("Current password").fill("not my password");
      await page.getByLabel("New password", { exact: true }).fill("an even quieter harbour");
      await page.getByLabel("Repeat the new password").fill("an even quieter harbour");
      await page.getByRole("button", { name: "Change password" }).click();
      await seen('input[name="current_password"][aria-invalid="true"]');
      await shot("18-account-error");
      await page.getByLabel("Current password").fill(user.password);
      await page.getByLabel("New password", { exact: true }).fill("an even quieter harbour");
      await page.getByLabel("Repeat the new password").fill("an even quieter harbour");
      await page.getByRole("button", { name: "Change password" }).click();
      await page.getByTestId("password-changed").waitFor();
      user.password = "an even quieter harbour";
      // The session goes on with the fresh token the change returned.
      await goTo("Dashboard", "Dashboard");
      await page.getByTestId("plan").waitFor();
      await shot("19-account-changed");

      await page.getByRole("button", { name: "Log out" }).click();
      await page.waitForURL(/\/console\/login$/);
      // Wrong password first: the error is announced (role=alert).
      await page.getByLabel("Email").fill(user.email);
      await page.getByLabel("Password").fill("guess");
      await page.keyboard.press("Enter");
      await seen('[role="alert"]', "Wrong email or password");
      await page.getByLabel("Password").focus();
      await page.keyboard.press("ControlOrMeta+a");
      await page.keyboard.type(user.password);
      await page.keyboard.press("Enter");
      await page.waitForURL(/\/console\/dashboard$/);
    },
    STEP_MS,
  );

  test(
    "forgotten password: the reset mail's link opens the console's reset page",
    async () => {
      await page.getByRole("button", { name: "Log out" }).click();
      await page.getByRole("link", { name: "Forgot your password?" }).click();
      await heading("Reset your password");
      await expectLabelled();
      const before = inbox.to(user.email).length;
      await page.getByLabel("Email").fill(user.email);
      await page.getByRole("button", { name: "Send reset link" }).click();
      await page.locator(".notice.success").waitFor();
      await shot("20-forgot");
      const messages = await inbox.waitFor(user.email, before + 1);
      const resetMail = messages.find((m) => /\/console\/reset\?token=/.test(m.parsed.text ?? ""))!;
      const token = linkToken(resetMail, "/console/reset", origin);
      await page.goto(`${origin}/console/reset?token=${token}`);
      const fresh = "a brand new lighthouse";
      await page.getByLabel("New password", { exact: true }).fill(fresh);
      await page.getByLabel("Repeat the new password").fill(fresh);
      await expectLabelled();
      await shot("21-reset");
      await page.getByRole("button", { name: "Change password" }).click();
      await page.locator(".notice.success").waitFor();
      expect(page.url()).toBe(`${origin}/console/reset`);
      // The link works once.
      await page.goto(`${origin}/console/reset?token=${token}`);
      await seen('[role="alert"]', "already been used");
      await page.goto(`${origin}/console/login`);
      await page.getByLabel("Email").fill(user.email);
      await page.getByLabel("Password").fill(fresh);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.waitForURL(/\/console\/dashboard$/);
      user.password = fresh;
    },
    STEP_MS,
  );

  test(
    "two-step sign-in: enrol with a locally drawn QR code, recovery codes once, the login's code step, new recovery codes, turn off",
    async () => {
      await goTo("Account", "Account");
      await seen('[data-testid="mfa-state"]', "Off");
      await page.getByRole("button", { name: "Set up two-step sign-in" }).click();
      const qr = page.getByTestId("mfa-qr");
      await qr.waitFor();
      const secret = (await page.getByTestId("mfa-secret").textContent())!;
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      // The QR code carries the otpauth:// URL of this secret, drawn in the page (no image fetched).
      const { data } = encode(generateURI({ issuer: "warden", label: user.email, secret }), { ecc: "M", border: 2 });
      let expected = "";
      data.forEach((row, y) => row.forEach((dark, x) => dark && (expected += `M${x} ${y}h1v1h-1z`)));
      await expect(qr.locator("path").getAttribute("d")).resolves.toBe(expected);
      await expectLabelled();
      await shot("27-mfa-enrol");
      const codeField = page.getByLabel("Code from your app");
      await codeField.fill("12345");
      await page.getByRole("button", { name: "Turn on" }).click();
      await seen(".field-error", "6-digit");
      await codeField.fill(await generate({ secret }));
      await page.getByRole("button", { name: "Turn on" }).click();
      const recovery = page.getByTestId("mfa-recovery");
      await recovery.waitFor();
      const codes = await recovery.locator("li").allTextContents();
      expect(codes).toHaveLength(10);
      await expect(recovery.textContent()).resolves.toContain("shown only once");
      await shot("28-mfa-recovery-codes");
      await recovery.getByRole("button", { name: "I have stored them" }).click();
      await seen('[data-testid="mfa-state"]', "On");
      await expect(recovery.count()).resolves.toBe(0);

      // Log out (the token ends on the server) and in again: the password, then the code step.
      await page.getByRole("button", { name: "Log out" }).click();
      await heading("Log in");
      await page.getByLabel("Email").fill(user.email);
      await page.getByLabel("Password").fill(user.password);
      await page.getByRole("button", { name: "Log in" }).click();
      await heading("Enter your code");
      await expectLabelled();
      await page.getByLabel("Code").fill("000000");
      await page.getByRole("button", { name: "Continue" }).click();
      await seen(".field-error", /wrong|used/i);
      await shot("29-mfa-login-code");
      // The confirm's 30 s step is spent: a recovery code signs in here.
      await page.getByLabel("Code").fill(codes[0]);
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(/\/console\/dashboard$/);

      await goTo("Account", "Account");
      await seen('[data-testid="mfa-state"]', "On");
      await page.getByLabel("Password").last().fill(user.password);
      await page.getByLabel("Code from your app, or a recovery code").fill(codes[0]);
      await page.getByRole("button", { name: "Turn off" }).click();
      // A spent recovery code is refused at the field, and the session stays.
      await seen(".field-error", /wrong|used/i);
      // New recovery codes (for another code), shown once; the earlier ones stop working.
      await page.getByLabel("Code from your app, or a recovery code").fill(codes[1]);
      await page.getByRole("button", { name: "New recovery codes" }).click();
      await recovery.waitFor();
      const renewed = await recovery.locator("li").allTextContents();
      expect(renewed).toHaveLength(10);
      expect(renewed.filter((code) => codes.includes(code))).toEqual([]);
      await recovery.getByRole("button", { name: "I have stored them" }).click();
      await seen('[data-testid="mfa-state"]', "On");
      await page.getByLabel("Password").last().fill(user.password);
      await page.getByLabel("Code from your app, or a recovery code").fill(codes[2]);
      await page.getByRole("button", { name: "Turn off" }).click();
      await seen(".field-error", /wrong|used/i);
      await page.getByLabel("Code from your app, or a recovery code").fill(renewed[0]);
      await page.getByRole("button", { name: "Turn off" }).click();
      await seen('[data-testid="mfa-state"]', "Off");
      await shot("30-mfa-off");
    },
    STEP_MS,
  );

  test(
    "phone width: every page fits 390 px without sideways scrolling",
    async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      for (const [label, title, name] of [
        ["Dashboard", "Dashboard", "22-phone-dashboard"],
        ["Keys", "API keys", "23-phone-keys"],
        ["Receipts", "Receipts", "24-phone-receipts"],
        ["Policy", "Policy", "24b-phone-policy"],
        ["Plan", "Plan", "25-phone-plan"],
        ["Account", "Account", "26-phone-account"],
      ] as const) {
        await goTo(label, title);
        await page.waitForLoadState("networkidle");
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBeLessThanOrEqual(0);
        await shot(name);
      }
      await page.setViewportSize({ width: 1100, height: 800 });
    },
    STEP_MS,
  );

  test("only the service's own origin was contacted, with no CSP violation or script error", () => {
    expectOnlyOwnOrigin(run);
    // No secret or token reached the log lines of the service.
    expect(run.logLines.filter((l) => l.includes(user.apiKey))).toEqual([]);
  });
});
