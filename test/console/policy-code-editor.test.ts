// The policy editor's code editor in Chromium (./chromium.ts), on Pro: a bad condition is marked at
// its line as it is typed, and again as the service's refusal once tests run; the "Line" button
// puts the cursor on it and a completion renames it; an operator is completed (the ones present
// left out); tests show a case held for approval; the impact preview counts the recorded
// decisions the draft would hold for approval, per day; the draft is published, and the
// dashboard shows its usage limits in their current windows. Styled under the console's CSP, with
// no inline style. Screenshots go to test/artifacts/editor-*.png.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { pretty } from "../../src/console/app/policy-text.ts";
import { uniqueEmail } from "../helpers/service.ts";
import { planSetAsApproved, testQuery } from "../helpers/sql.ts";
import { chromiumAvailable, codeEditor, expectOnlyOwnOrigin, insecure, openConsoleInBrowser, testChromiumInstalled, type ConsoleInBrowser } from "./chromium.ts";

const STEP_MS = 90_000;

/** The draft: its first rule tests a condition whose name is misspelt (amont). */
const DRAFT = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "deny_payment_over_100", effect: "deny", reason: "amount_over_100", when: { actions: ["payment.*"], amont: { gt: 100 } } },
    { id: "refunds_need_approval", effect: "require_approval", reason: "refund_over_100", when: { actions: ["refund.issue"], amount: { gt: 100 } }, approval: { quorum: 1 } },
    { id: "emails_per_hour", effect: "deny", reason: "too_many_emails", when: { actions: ["email.send"], usage: { sum: "count", per: "key", window: "hour", gt: 20 } } },
    { id: "payments_per_month", effect: "deny", reason: "monthly_budget", when: { actions: ["payment.send"], currency: { eq: "USD" }, usage: { sum: "amount", per: "tenant", window: "month", gt: 2000 } } },
    { id: "allow_the_rest", effect: "allow", reason: "ok", when: { actions: ["payment.send", "email.send", "refund.issue"] } },
  ],
};

testChromiumInstalled();

describe.skipIf(!chromiumAvailable)("the policy's code editor, in Chromium", () => {
  let run: ConsoleInBrowser;
  let page: Page;
  const user = { email: uniqueEmail("editor"), password: "a lantern by the quay", tenantId: "", apiKey: "", token: "" };

  const protect = async (input: unknown) => {
    const reply = await fetch(`${run.origin}/v1/protect`, { ...insecure, method: "POST", headers: { "content-type": "application/json", "x-api-key": user.apiKey }, body: JSON.stringify(input) });
    expect(reply.status).toBe(200);
    return (await reply.json()) as { receipt_id: string; decision: string };
  };
  const goTo = async (label: string, title: string) => {
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: label, exact: true }).click();
    await run.heading(title);
  };
  const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;
  const option = (label: string) => page.locator(".cm-tooltip-autocomplete li", { has: page.locator(".cm-completionLabel", { hasText: new RegExp(`^${label}$`) }) });
  const offered = () => page.locator(".cm-tooltip-autocomplete .cm-completionLabel").allTextContents();

  beforeAll(async () => {
    run = await openConsoleInBrowser("editor");
    page = run.page;
    const reply = await fetch(`${run.origin}/auth/signup`, { ...insecure, method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: user.email, password: user.password }) });
    expect(reply.status).toBe(201);
    const body = (await reply.json()) as { tenant_id: string; api_key: string; token: string };
    Object.assign(user, { tenantId: body.tenant_id, apiKey: body.api_key, token: body.token });
    await planSetAsApproved(run.server.service.deps.db, user.tenantId, "pro");
    // Recorded decisions under the default policy, for the impact preview: a payment of 250
    // (allowed), two refunds of 500 (no rule: denied), which the draft holds for approval.
    expect((await protect({ action: "payment.send", resource: "vendor/acme", amount: 250, currency: "USD" })).decision).toBe("ALLOWED");
    for (let i = 0; i < 2; i++) expect((await protect({ action: "refund.issue", amount: 500, currency: "EUR" })).decision).toBe("DENIED");
    await page.goto(`${run.origin}/console/login`);
    await run.heading("Log in");
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Log in" }).click();
    await run.heading("Dashboard");
  }, 120_000);

  afterAll(() => run?.close(), 60_000);

  test(
    "the dashboard says when the policy sets no usage limit",
    async () => {
      await run.seen('[data-testid="usage-limits"]', "sets no budget or rate window");
    },
    STEP_MS,
  );

  test(
    "a code editor, styled under the CSP, named by its label; a bad condition marked at its line, then as the service's refusal",
    async () => {
      await goTo("Policy", "Policy");
      const doc = codeEditor(page, "document");
      await doc.ready();
      await codeEditor(page, "cases").ready();
      // No textarea stands in once the editor is there; the text box is named by the visible label.
      await expect(page.locator('textarea[name="document"]').count()).resolves.toBe(0);
      await expect(page.getByRole("textbox", { name: "Policy document (JSON)" }).count()).resolves.toBe(1);
      // CodeMirror's own styles apply (an adopted sheet): its gutters are a flex row, our theme sets the height.
      await expect(doc.root.locator(".cm-gutters").evaluate((e) => getComputedStyle(e).display)).resolves.toBe("flex");
      await expect(doc.root.locator(".cm-editor").evaluate((e) => getComputedStyle(e).height)).resolves.toBe("448px");
      await expect(page.locator("style").count()).resolves.toBe(0);
      // Clicking the label puts the keyboard in the editor.
      await page.locator("#policy-document-label").click();
      await page.locator('[data-testid="document-editor"] .cm-content:focus').waitFor();

      const text = pretty(DRAFT);
      const bad = lineOf(text, '"amont"');
      await doc.box.fill(text);
      // The view back at the start: the editor draws only the lines near the view, and the filled
      // text leaves the view at its end.
      await doc.home();
      // Marked as typed, at its line: in the text, in the gutter, and listed under the editor.
      const mark = doc.line(bad).locator(".cm-lintRange-error");
      await mark.waitFor();
      await expect(mark.textContent()).resolves.toBe('"amont"');
      const marker = doc.root.locator(".cm-gutter-lint .cm-gutterElement", { has: page.locator(".cm-lint-marker-error") });
      await expect(marker.count()).resolves.toBe(1);
      expect(Math.abs((await marker.boundingBox())!.y - (await doc.line(bad).boundingBox())!.y)).toBeLessThan(3);
      const listed = page.locator(`[data-testid="document-problems"] li[data-line="${bad}"]`);
      const explained = 'rules[0].when.amont: "amont" is not allowed here: a condition is one of actions, resources, keys, amount, currency, context, usage, where';
      await expect(listed.textContent()).resolves.toBe(`Line ${bad}: ${explained}`);
      await expect(listed.getAttribute("data-source")).resolves.toBe("browser");
      await expect(doc.box.getAttribute("aria-invalid")).resolves.toBe("true");
      await expect(doc.box.getAttribute("aria-describedby")).resolves.toBe("policy-document-hint policy-document-problems");
      // Hovering the mark says it too.
      await mark.hover();
      await run.seen(".cm-tooltip-lint", "is not allowed here");
      await run.shot("01-marked");

      // The service refuses the same path when tests run: its refusal now stands at that line.
      await page.getByRole("button", { name: "Run tests" }).click();
      // (in the page's words, which say what is allowed: the service's are "Unexpected property").
      const refused = page.locator(`[data-testid="document-problems"] li[data-line="${bad}"][data-source="service"]`);
      await refused.waitFor();
      await expect(refused.textContent()).resolves.toBe(`Line ${bad}: ${explained} (refused by the service)`);
      await mark.hover();
      await run.seen(".cm-tooltip-lint .cm-diagnosticSource", "refused by the service");
      await expect(page.locator('[data-testid="document-problems"] li').count()).resolves.toBe(1);
      await expect(page.getByTestId("test-results").count()).resolves.toBe(0);
      await run.shot("02-refused");
    },
    STEP_MS,
  );

  test(
    "completion: the line's button puts the cursor on the problem, a completion renames it; operators offered without those present",
    async () => {
      const doc = codeEditor(page, "document");
      const bad = lineOf(pretty(DRAFT), '"amont"');
      await page.locator(`[data-testid="document-problems"] li[data-line="${bad}"]`).getByRole("button", { name: `Line ${bad}` }).click();
      await page.locator('[data-testid="document-editor"] .cm-content:focus').waitFor();
      expect(await doc.caretLine()).toBe(bad);
      // The name is selected: typed over, then completed. closeBrackets closes the quote.
      await page.keyboard.press("Backspace");
      await page.keyboard.type('"am');
      await option("amount").waitFor();
      expect(await offered()).toContain("amount");
      await run.shot("03-completion");
      await page.keyboard.press("Enter");
      await page.locator(`[data-testid="document-problems"]`).waitFor({ state: "detached" });
      await expect(doc.box.getAttribute("aria-invalid")).resolves.toBe("false");
      await expect(doc.line(bad).textContent()).resolves.toBe('        "amount": {');

      // A second operator, by keyboard alone: Ctrl+Space asks; the list, in the order of
      // docs/policy.md, leaves out gt, which is there; the arrows choose, Enter inserts the name.
      await doc.line(bad + 1).click();
      await page.keyboard.press("End");
      await page.keyboard.type(",");
      await page.keyboard.press("Enter");
      await page.keyboard.press("Control+Space");
      await option("lte").waitFor();
      const operators = await offered();
      expect(operators).toEqual(["eq", "ne", "in", "not_in", "exists", "gte", "lt", "lte"]);
      // CodeMirror takes no key for a new list in its first 75 ms (interactionDelay): a person is slower.
      await page.waitForTimeout(150);
      for (let i = 0; i < operators.indexOf("lte"); i++) await page.keyboard.press("ArrowDown");
      await page.keyboard.press("Enter");
      await page.keyboard.type("100000");
      // Checked again once typing pauses (300 ms): nothing left to mark.
      await page.waitForTimeout(400);
      await page.locator(`[data-testid="document-problems"]`).waitFor({ state: "detached" });
      const typed = JSON.parse(await doc.text());
      expect(typed.rules[0].when).toEqual({ actions: ["payment.*"], amount: { gt: 100, lte: 100000 } });
      expect(typed.rules.slice(1)).toEqual(JSON.parse(pretty(DRAFT)).rules.slice(1));
      // Tab is the browser's: the keyboard leaves the editor (no trap).
      await doc.box.focus();
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => !!document.activeElement?.closest('[data-testid="document-editor"]'))).toBe(false);
      await run.shot("04-completed");
    },
    STEP_MS,
  );

  test(
    "tests show a case held for approval; the impact preview counts the decisions the draft would hold, per day; then publish",
    async () => {
      const cases = codeEditor(page, "cases");
      const suite = [
        { name: "a refund of 500 waits for a person", input: { action: "refund.issue", amount: 500, currency: "EUR" }, expect: { decision: "DENIED", approval_required: true } },
        { name: "a refund of 50 is allowed", input: { action: "refund.issue", amount: 50, currency: "EUR" }, expect: { decision: "ALLOWED" } },
        { name: "a refund of 200 needs no approval", input: { action: "refund.issue", amount: 200, currency: "EUR" }, expect: { decision: "DENIED", approval_required: false } },
      ];
      await cases.box.fill(JSON.stringify(suite, null, 2));
      await page.getByRole("button", { name: "Run tests" }).click();
      await page.locator('[data-testid="test-results"][data-failed="1"]').waitFor();
      const held = page.locator('[data-testid="test-results"] tr', { hasText: "a refund of 500 waits" });
      await expect(held.getAttribute("data-passed")).resolves.toBe("true");
      await expect(held.getByTestId("approval-required").textContent()).resolves.toBe("approval required");
      const wrong = page.locator('[data-testid="test-results"] tr', { hasText: "a refund of 200" });
      await expect(wrong.getAttribute("data-passed")).resolves.toBe("false");
      await expect(wrong.locator('td[data-label="Decision"]').textContent()).resolves.toBe("DENIEDapproval requiredexpected no approval");
      await expect(page.locator('[data-testid="test-results"] tr', { hasText: "a refund of 50 is allowed" }).getByTestId("approval-required").count()).resolves.toBe(0);
      await run.shot("05-tests");

      await page.getByRole("button", { name: "Preview impact" }).click();
      await page.getByTestId("impact").waitFor();
      await expect(page.getByTestId("impact-approval_required").textContent()).resolves.toBe("2");
      await expect(page.getByTestId("impact-allowed_to_denied").textContent()).resolves.toBe("1");
      const today = new Date().toISOString().slice(0, 10);
      const day = page.locator(`[data-testid="impact-approvals"] tr[data-day="${today}"]`);
      await expect(day.locator('td[data-label="Requests"]').textContent()).resolves.toBe("2");
      await expect(page.locator('[data-testid="impact-approvals"] tbody tr').count()).resolves.toBe(1);
      await run.shot("06-impact");

      await page.getByRole("button", { name: "Publish new version" }).click();
      await page.locator('[data-testid="policy-version"]', { hasText: "v2" }).waitFor();
      // The new version's document is in the editor, with nothing marked.
      await codeEditor(page, "document").ready();
      expect(JSON.parse(await codeEditor(page, "document").text()).rules[0].when.amount).toEqual({ gt: 100, lte: 100000 });
    },
    STEP_MS,
  );

  test(
    "the dashboard shows each usage limit of the published policy in its window: per key, and the tenant's total",
    async () => {
      for (let i = 0; i < 3; i++) expect((await protect({ action: "email.send", resource: "to/someone" })).decision).toBe("ALLOWED");
      expect((await protect({ action: "payment.send", resource: "vendor/acme", amount: 50, currency: "USD" })).decision).toBe("ALLOWED");
      await goTo("Dashboard", "Dashboard");
      const limits = page.getByTestId("usage-limits");
      await limits.locator("table").waitFor();
      const { keys } = (await (await fetch(`${run.origin}/customer/keys`, { ...insecure, headers: { authorization: `Bearer ${user.token}` } })).json()) as { keys: { key_id: string }[] };
      const keyId = keys[0].key_id;
      const emails = limits.locator(`tr[data-rule="emails_per_hour"][data-key="${keyId}"]`);
      await expect(emails.locator('td[data-label="Key"]').textContent()).resolves.toContain(keyId);
      await expect(emails.locator('td[data-label="Window"]').textContent()).resolves.toBe("hour (requests)");
      await expect(emails.getByTestId("limit-used").textContent()).resolves.toBe("3 of 20 (the rule applies over 20)");
      const hour = new Date();
      hour.setUTCMinutes(0, 0, 0);
      await expect(emails.locator('td[data-label="Window start"] time').getAttribute("datetime")).resolves.toBe(hour.toISOString());
      const budget = limits.locator('tr[data-rule="payments_per_month"][data-key=""]');
      await expect(budget.locator('td[data-label="Key"]').textContent()).resolves.toBe("all keys together");
      await expect(budget.getByTestId("limit-used").textContent()).resolves.toBe("50 of 2,000 USD (the rule applies over 2,000)");
      await run.shot("07-dashboard-limits");
      expectOnlyOwnOrigin(run);
    },
    STEP_MS,
  );
});
