// Human approval in a real browser (./chromium.ts): an owner on Pro publishes a rule that holds
// large refunds for one approval and invites two approvers. A bot's protect is held; an approver
// opens the emailed link, logs in, sees the exact request and approves it, while the bot waits
// with GET /v1/approvals/{id}?wait=20, which answers approved; the bot executes the outcome receipt
// and the approval's bundle verifies in the browser. The owner, who made the bot's key, is not
// emailed and is shown no vote buttons, with why; a vote on another action hash is refused (action_changed) and said;
// a second request is denied from the inbox, where pending ones come first.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { linkToken, type Inbox, type Received } from "../helpers/mail.ts";
import { uniqueEmail } from "../helpers/service.ts";
import { planSetAsApproved, testQuery } from "../helpers/sql.ts";
import { join } from "node:path";
import { ARTIFACTS, chromiumAvailable, expectOnlyOwnOrigin, insecure, openConsoleInBrowser, testChromiumInstalled, type ConsoleInBrowser } from "./chromium.ts";

const STEP_MS = 60_000;
const PASSWORD = "a quiet harbour at dawn";

const POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "refunds_over_100", effect: "require_approval", reason: "refund_over_100", when: { actions: ["refund.issue"], amount: { gt: 100 } }, approval: { quorum: 1, expires_in: 900, execute_within: 300 } },
    { id: "small_refunds", effect: "allow", reason: "small_refund", when: { actions: ["refund.issue"] } },
  ],
};
const REFUND = { action: "refund.issue", resource: "order/8812", amount: 250, currency: "EUR" };

testChromiumInstalled();

describe.skipIf(!chromiumAvailable)("approvals in the console", () => {
  let run: ConsoleInBrowser;
  let inbox: Inbox;
  let origin: string;
  let owner: Page;
  let alicePage: Page;
  const people = { owner: uniqueEmail("apv-owner"), alice: uniqueEmail("apv-alice"), bob: uniqueEmail("apv-bob") };
  let ownerToken = "";
  let botKey = "";
  let first: { approval_id: string; action_hash: string; receipt_id: string };

  /** A call of the JSON API outside the browser, with a session token or the bot's key. */
  const request = async (method: string, path: string, auth: { token?: string; key?: string }, json?: unknown) => {
    const headers: Record<string, string> = {};
    if (auth.token) headers.authorization = `Bearer ${auth.token}`;
    if (auth.key) headers["x-api-key"] = auth.key;
    if (json !== undefined) headers["content-type"] = "application/json";
    const reply = await fetch(origin + path, { ...insecure, method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
    return { status: reply.status, body: (await reply.json()) as any };
  };
  const protect = async (input: unknown) => {
    const reply = await request("POST", "/v1/protect", { key: botKey }, input);
    expect(reply.status).toBe(200);
    expect(reply.body.decision).toBe("DENIED");
    expect(reply.body.approval.status).toBe("pending");
    return { ...reply.body.approval, receipt_id: reply.body.receipt_id } as typeof first;
  };
  const heading = (page: Page, title: string | RegExp) => page.getByRole("heading", { level: 1, name: title }).waitFor();
  const newPage = async () => {
    const page = await run.context.newPage();
    page.setDefaultTimeout(20_000);
    page.on("pageerror", (e) => run.pageErrors.push(String(e)));
    return page;
  };
  const logIn = async (page: Page, email: string) => {
    await heading(page, "Log in");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
  };
  /** The approval email's link: to the console's page of that approval, in text and HTML alike. */
  const approvalLink = (mail: Received, approvalId: string) => {
    const url = `${origin}/console/approvals/${approvalId}`;
    expect(mail.parsed.text).toContain(url);
    expect(String(mail.parsed.html)).toContain(url);
    return url;
  };
  const vote = async (page: Page, button: "Approve" | "Deny") => {
    await page.getByRole("button", { name: button, exact: true }).click();
    await page.getByRole("dialog").getByRole("button", { name: `${button} request` }).click();
  };
  /** A full-page screenshot of any of the pages (run.shot takes the first one's). */
  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `approvals-${name}.png`), fullPage: true });
  const statusOf = (page: Page) => page.getByTestId("approval-status").first().textContent();

  beforeAll(async () => {
    run = await openConsoleInBrowser("approvals");
    ({ inbox, origin } = run);
    owner = run.page;
    const signup = await request("POST", "/auth/signup", {}, { email: people.owner, password: PASSWORD });
    expect(signup.status).toBe(201);
    ownerToken = signup.body.token;
    await planSetAsApproved(run.server.service.deps.db, signup.body.tenant_id, "pro");
    expect((await request("PUT", "/customer/policy", { token: ownerToken }, { document: POLICY })).status).toBe(200);
    const key = await request("POST", "/customer/keys", { token: ownerToken }, { label: "refund-bot" });
    expect(key.status).toBe(201);
    botKey = key.body.secret;
    // Two approvers join by the emailed invitation, choosing a password.
    for (const email of [people.alice, people.bob]) {
      expect((await request("POST", "/customer/members/invitations", { token: ownerToken }, { email, role: "approver" })).status).toBe(201);
      const [mail] = await inbox.waitFor(email);
      const token = linkToken(mail, "/console/invitation", origin);
      expect((await request("POST", "/auth/invitations/accept", {}, { token, password: PASSWORD })).status).toBe(200);
    }
  }, 120_000);

  afterAll(() => run?.close(), 60_000);

  test(
    "a held refund: the approver's email links to the approval, which shows the exact request, the rule and its terms",
    async () => {
      first = await protect(REFUND);
      const mail = (await inbox.waitFor(people.alice, 2)).find((m) => /Approval requested/.test(m.parsed.subject ?? ""))!;
      expect(mail.parsed.subject).toContain("refund.issue");
      // Nothing approves from the email itself: it only links to the console.
      const link = approvalLink(mail, first.approval_id);

      alicePage = await newPage();
      await alicePage.goto(link);
      // Signed out: the login page, and back to the approval after it.
      await logIn(alicePage, people.alice);
      await heading(alicePage, /Approval/);
      await alicePage.waitForURL(link);
      expect(await statusOf(alicePage)).toBe("pending");
      expect(await alicePage.getByTestId("approval-amount").textContent()).toBe("250 EUR");
      expect(JSON.parse((await alicePage.getByTestId("approval-input-json").textContent())!)).toEqual(REFUND);
      expect(await alicePage.getByTestId("action-hash").textContent()).toBe(first.action_hash);
      // The page hashed the signed request itself and found the action hash it will vote on.
      await alicePage.getByTestId("hash-checked").waitFor();
      expect(await alicePage.getByTestId("approval-key").textContent()).toContain(`refund-bot`);
      expect(await alicePage.getByTestId("approval-key").textContent()).toContain(people.owner);
      expect(await alicePage.getByTestId("terms-quorum").textContent()).toContain("1 person must approve");
      expect(await alicePage.getByTestId("terms-roles").textContent()).toBe("owner, admin, approver");
      expect(await alicePage.getByTestId("countdown").first().textContent()).toMatch(/^1[45] min \d\d s left$/);
      expect(await alicePage.getByTestId("timeline").locator("li").evaluateAll((items) => items.map((li) => li.getAttribute("data-kind")))).toEqual(["protect"]);
      // Pending: each receipt verifies; the votes and outcome are checked once it is decided.
      await alicePage.getByRole("button", { name: "Verify the bundle in this browser" }).click();
      await alicePage.getByTestId("bundle-pending").waitFor();
      expect(await alicePage.getByTestId("bundle-result").getAttribute("data-verified")).toBe("true");
      await shot(alicePage, "01-approval-pending");
    },
    STEP_MS,
  );

  test(
    "the owner sees it first in the inbox, with the pending count; having made the bot's key, they are shown no vote buttons, and why",
    async () => {
      // A tab in the background gets no animation frames, which Playwright's clicks wait for.
      await owner.bringToFront();
      await owner.goto(`${origin}/console/login`);
      await logIn(owner, people.owner);
      await owner.waitForURL(/\/console\/dashboard$/);
      const nav = owner.getByRole("navigation", { name: "Console" }).getByRole("link", { name: /^Approvals/ });
      await owner.getByTestId("pending-count").filter({ hasText: "1" }).waitFor();
      expect(await nav.getAttribute("href")).toBe("/console/approvals");
      await nav.click();
      await heading(owner, "Approvals");
      const row = owner.getByTestId("pending-table").locator(`tr[data-approval-id="${first.approval_id}"]`);
      await row.filter({ hasText: "refund.issue" }).waitFor();
      await row.filter({ hasText: "250 EUR" }).waitFor();
      expect(await row.textContent()).toContain("refund-bot");
      expect(await row.textContent()).toContain("refunds_over_100");
      expect(await row.textContent()).toContain("0 of 1");
      expect(await row.getByTestId("countdown").textContent()).toMatch(/ left$/);
      await owner.getByTestId("no-approvals").waitFor();
      await shot(owner, "02-inbox-pending");

      await row.getByRole("link", { name: "refund.issue" }).click();
      await heading(owner, /Approval/);
      await owner.getByTestId("hash-checked").waitFor();
      // No buttons for a vote the service would refuse (self_approval), and the page says why.
      const why = owner.getByTestId("own-key-no-vote");
      await why.waitFor();
      expect(await why.textContent()).toContain("You made the key that asked");
      expect(await owner.getByRole("button", { name: "Approve", exact: true }).count()).toBe(0);
      expect(await owner.getByRole("button", { name: "Deny", exact: true }).count()).toBe(0);
      expect(await statusOf(owner)).toBe("pending");
      await shot(owner, "03-self-approval-refused");
    },
    STEP_MS,
  );

  test(
    "the approver approves with a comment: the bot's wait answers approved, it executes the outcome once, and the bundle verifies in the browser",
    async () => {
      // The bot waits before anyone votes; the vote's commit wakes it.
      const waiting = request("GET", `/v1/approvals/${first.approval_id}?wait=20`, { key: botKey });
      await alicePage.bringToFront();
      await alicePage.getByLabel("Comment (optional)").fill("Customer called twice; refund approved.");
      await vote(alicePage, "Approve");
      await alicePage.getByTestId("approval-status").filter({ hasText: "approved" }).waitFor();
      await alicePage.getByTestId("status").filter({ hasText: "You approved the request" }).waitFor();

      const answered = await waiting;
      expect(answered.status).toBe(200);
      expect(answered.body).toMatchObject({ status: "approved", approval_id: first.approval_id, protect_receipt_id: first.receipt_id });
      expect(answered.body.outcome_receipt_id).toMatch(/^rcpt_/);
      const executed = await request("POST", "/v1/execute", { key: botKey }, { receipt_id: answered.body.outcome_receipt_id });
      expect(executed.status).toBe(200);
      expect(executed.body.decision).toBe("ALLOWED");
      expect((await request("POST", "/v1/execute", { key: botKey }, { receipt_id: answered.body.outcome_receipt_id })).body.error).toBe("already_executed");

      await alicePage.getByRole("button", { name: "Refresh" }).click();
      await alicePage.getByTestId("approval-status").filter({ hasText: "executed" }).waitFor();
      const timeline = alicePage.getByTestId("timeline");
      await timeline.locator('li[data-kind="execute"]').waitFor();
      expect(await timeline.locator("li").evaluateAll((items) => items.map((li) => li.getAttribute("data-kind")))).toEqual(["protect", "vote", "approval", "execute"]);
      expect(await timeline.locator('li[data-kind="vote"]').textContent()).toContain("You (approver) voted approve, with a comment");

      await alicePage.getByRole("button", { name: "Verify the bundle in this browser" }).click();
      const result = alicePage.getByTestId("bundle-result");
      await result.waitFor();
      expect(await result.getAttribute("data-verified")).toBe("true");
      expect(await result.locator('tbody tr[data-verified="true"]').count()).toBe(4);
      // The approval itself: distinct eligible members approved this exact action in time, and the execute followed.
      const approvalChecks = result.getByTestId("bundle-approval-checks").locator("li");
      expect(await approvalChecks.evaluateAll((items) => items.map((li) => [li.getAttribute("data-check"), li.getAttribute("data-passed")]))).toEqual([
        ["receipts_in_log", "true"],
        ["protect", "true"],
        ["votes", "true"],
        ["outcome", "true"],
        ["execute", "true"],
      ]);
      expect(await result.getByTestId("bundle-approvers").textContent()).toBe("Approved by you.");
      // A bundle whose vote was edited on its way (said deny, not approve) fails, and says where.
      await alicePage.route("**/customer/approvals/*/bundle", async (route) => {
        const bundle = await (await route.fetch()).json();
        const vote = bundle.receipts.find((r: { kind: string }) => r.kind === "vote");
        vote.payload.vote = "deny";
        await route.fulfill({ json: bundle });
      });
      await alicePage.getByRole("button", { name: "Verify the bundle in this browser" }).click();
      await result.and(alicePage.locator('[data-verified="false"]')).waitFor();
      expect(await result.locator("tbody tr").evaluateAll((rows) => rows.map((tr) => tr.getAttribute("data-verified")))).toEqual(["true", "false", "true", "true"]);
      expect(await result.locator('li[data-passed="false"]').evaluateAll((items) => items.map((li) => li.getAttribute("data-check")))).toEqual(["receipts_in_log", "outcome"]);
      await alicePage.unroute("**/customer/approvals/*/bundle");
      await shot(alicePage, "04-approved-executed-verified");

      // The owner's view names the approver; each step opens as a receipt that verifies on its own.
      await owner.bringToFront();
      await owner.getByRole("button", { name: "Refresh" }).click();
      await owner.getByTestId("approval-status").filter({ hasText: "executed" }).waitFor();
      expect(await owner.getByTestId("timeline").locator('li[data-kind="vote"]').textContent()).toContain(`${people.alice} (approver) voted approve`);
      await owner.getByTestId("timeline").locator('li[data-kind="approval"]').getByRole("link").click();
      await heading(owner, /Receipt/);
      await owner.getByRole("button", { name: "Verify in this browser" }).click();
      await owner.getByTestId("verify-result").waitFor();
      expect(await owner.getByTestId("verify-result").getAttribute("data-verified")).toBe("true");
      await owner.getByRole("link", { name: first.approval_id }).click();
      await heading(owner, /Approval/);
    },
    STEP_MS,
  );

  test(
    "a second request: pending first in the inbox; a vote on another action hash is refused and said; then one deny denies it",
    async () => {
      const second = await protect({ ...REFUND, resource: "order/9001", amount: 400 });
      await owner.getByRole("navigation", { name: "Console" }).getByRole("link", { name: /^Approvals/ }).click();
      await heading(owner, "Approvals");
      await owner.getByTestId("pending-table").locator(`tr[data-approval-id="${second.approval_id}"]`).filter({ hasText: "400 EUR" }).waitFor();
      await owner.getByTestId("approvals-table").locator(`tr[data-approval-id="${first.approval_id}"][data-status="executed"]`).waitFor();
      expect(await owner.getByTestId("approvals-table").locator(`tr[data-approval-id="${second.approval_id}"]`).count()).toBe(0);
      await shot(owner, "05-inbox-mixed");
      await owner.getByLabel("Show").selectOption("executed");
      await owner.getByTestId("approvals-table").locator(`tr[data-approval-id="${first.approval_id}"]`).waitFor();
      expect(await owner.getByTestId("pending-table").count()).toBe(0);
      expect(await owner.getByTestId("approvals-table").locator("tbody tr").count()).toBe(1);

      const bob = await newPage();
      await bob.goto(`${origin}/console/approvals/${second.approval_id}`);
      await logIn(bob, people.bob);
      await heading(bob, /Approval/);
      await bob.getByTestId("hash-checked").waitFor();
      // A vote that reaches the service with another action hash (a stale or altered page) is refused.
      await bob.route("**/customer/approvals/*/votes", (route) => {
        const body = JSON.parse(route.request().postData() ?? "{}");
        return route.continue({ postData: JSON.stringify({ ...body, action_hash: `0x${"0".repeat(64)}` }) });
      });
      await vote(bob, "Deny");
      await bob.getByTestId("vote-refusal").waitFor();
      expect(await bob.getByTestId("vote-refusal").getAttribute("data-code")).toBe("action_changed");
      expect(await statusOf(bob)).toBe("pending");
      await bob.unroute("**/customer/approvals/*/votes");

      await vote(bob, "Deny");
      await bob.getByTestId("approval-status").filter({ hasText: "denied" }).waitFor();
      await bob.getByRole("button", { name: "Verify the bundle in this browser" }).click();
      await bob.getByTestId("bundle-approval-checks").waitFor();
      expect(await bob.getByTestId("bundle-result").getAttribute("data-verified")).toBe("true");
      expect(await bob.getByTestId("bundle-result").textContent()).toContain("they prove the outcome (denied)");
      const seen = await request("GET", `/v1/approvals/${second.approval_id}`, { key: botKey });
      expect(seen.body.status).toBe("denied");
      expect((await request("POST", "/v1/execute", { key: botKey }, { receipt_id: seen.body.outcome_receipt_id })).body.error).toBe("decision_denied");
      await shot(bob, "06-denied");

      // At phone width the approval and the inbox fit without sideways scrolling.
      await bob.setViewportSize({ width: 390, height: 844 });
      for (const path of [`/console/approvals/${second.approval_id}`, "/console/approvals"]) {
        await bob.goto(origin + path);
        await heading(bob, /Approval/);
        await bob.getByTestId("approval-status").first().waitFor();
        expect(await bob.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
      }
      await shot(bob, "07-phone-inbox");
      await bob.close();
      expectOnlyOwnOrigin(run);
    },
    STEP_MS,
  );
});
