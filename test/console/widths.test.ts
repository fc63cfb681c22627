// The console at a phone's width (390 px) and a desktop's (1280 px), in a real browser
// (./chromium.ts), with data in every page: keys with metadata and limits, a pending approval, a
// webhook whose deliveries failed, and people in two tenants. Every route at both widths has no
// horizontal scroll: neither the page nor any panel, table or card is wider than its box. The
// webhooks page end to end against a real HTTPS receiver on loopback; an approver votes from a
// 390 px page. Screenshots go to test/artifacts/widths-*.png.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { devCertificate } from "../security/helpers.ts";
import { linkToken, type Inbox } from "../helpers/mail.ts";
import { uniqueEmail } from "../helpers/service.ts";
import { planSetAsApproved, testQuery } from "../helpers/sql.ts";
import { startReceiver, type Receiver } from "../helpers/webhooks.ts";
import { chromiumAvailable, expectOnlyOwnOrigin, insecure, openConsoleInBrowser, testChromiumInstalled, type ConsoleInBrowser } from "./chromium.ts";

const STEP_MS = 120_000;
const PASSWORD = "a quiet harbour at dawn";
const WIDTHS = [390, 1280] as const;

const POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "refunds_over_100", effect: "require_approval", reason: "refund_over_100", when: { actions: ["refund.issue"], amount: { gt: 100 } }, approval: { quorum: 1, expires_in: 3600, execute_within: 300 } },
    { id: "small_refunds", effect: "allow", reason: "small_refund", when: { actions: ["refund.issue"] } },
  ],
};

testChromiumInstalled();

/** What is wider than its box on the page now: the page itself, or a panel, card, table or the header. */
async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const over: string[] = [];
    const name = (el: Element) => {
      const section = el.closest("[aria-labelledby]");
      const label = section?.getAttribute("aria-labelledby");
      const title = label ? document.getElementById(label)?.textContent : undefined;
      return `${el.tagName.toLowerCase()}${el.className ? `.${String(el.className).split(" ").join(".")}` : ""}${title ? ` "${title.slice(0, 40)}"` : ""}`;
    };
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth) over.push(`the page: ${root.scrollWidth} > ${root.clientWidth}`);
    for (const el of document.querySelectorAll("header.top, main, .banner, .panel, .card, .secret, .table-wrap, table, .row-buttons, .tenant-switcher")) {
      if (el.scrollWidth > el.clientWidth + 1) over.push(`${name(el)}: ${el.scrollWidth} > ${el.clientWidth}`);
      const box = el.getBoundingClientRect();
      if (box.right > root.clientWidth + 1) over.push(`${name(el)} ends at ${Math.round(box.right)} of ${root.clientWidth}`);
    }
    return over;
  });
}

describe.skipIf(!chromiumAvailable)("the console at 390 and 1280 px", () => {
  let run: ConsoleInBrowser;
  let receiver: Receiver;
  let inbox: Inbox;
  let origin: string;
  let page: Page;
  const people = { owner: uniqueEmail("w-owner"), alice: uniqueEmail("w-alice") };
  const tokens = { owner: "", alice: "" };
  const tenants = { a: "", b: "" };
  let botKey = "";
  let approval = { approval_id: "", action_hash: "", receipt_id: "" };
  let failingHook = "";

  const request = async (method: string, path: string, auth: { token?: string; key?: string }, json?: unknown) => {
    const headers: Record<string, string> = {};
    if (auth.token) headers.authorization = `Bearer ${auth.token}`;
    if (auth.key) headers["x-api-key"] = auth.key;
    if (json !== undefined) headers["content-type"] = "application/json";
    const reply = await fetch(origin + path, { ...insecure, method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
    return { status: reply.status, body: (await reply.json()) as any };
  };
  const heading = (p: Page, title: string | RegExp) => p.getByRole("heading", { level: 1, name: title }).waitFor();
  const logIn = async (p: Page, email: string) => {
    await p.goto(`${origin}/console/login`);
    await heading(p, "Log in");
    await p.getByLabel("Email").fill(email);
    await p.getByLabel("Password").fill(PASSWORD);
    await p.getByRole("button", { name: "Log in" }).click();
    await p.waitForURL(/\/console\/dashboard$/);
  };
  /** The session of `tenantId`, through the header's tenant selector (the login answers the tenant used last). */
  const intoTenant = async (p: Page, tenantId: string) => {
    const select = p.getByLabel("Tenant");
    await select.waitFor();
    if ((await select.inputValue()) === tenantId) return;
    await select.selectOption(tenantId);
    await p.getByTestId("status").filter({ hasText: "Switched to" }).waitFor();
    await p.waitForFunction((id) => (document.getElementById("tenant-select") as HTMLSelectElement | null)?.value === id, tenantId);
  };
  const invite = async (token: string, email: string, role: string) => {
    expect((await request("POST", "/customer/members/invitations", { token }, { email, role })).status).toBe(201);
    // After the signup's verification mail.
    const mails = await inbox.waitFor(email, 2);
    return linkToken(mails.find((m) => /invited/.test(m.parsed.subject ?? ""))!, "/console/invitation", origin);
  };
  const shot = (p: Page, name: string) => p.screenshot({ path: `${import.meta.dir}/../artifacts/widths-${name}.png`, fullPage: true });

  beforeAll(async () => {
    receiver = await startReceiver();
    const { cert } = await devCertificate();
    run = await openConsoleInBrowser("widths", { webhookDelivery: true, webhookAllowPrivate: true, extraCaCerts: cert });
    ({ inbox, origin, page } = run);

    // Tenant A: the owner on Pro with a rule that holds large refunds, a bot key with metadata.
    const owner = await request("POST", "/auth/signup", {}, { email: people.owner, password: PASSWORD });
    expect(owner.status).toBe(201);
    tokens.owner = owner.body.token;
    tenants.a = owner.body.tenant_id;
    await planSetAsApproved(run.server.service.deps.db, tenants.a, "pro");
    expect((await request("PUT", "/customer/policy", { token: tokens.owner }, { document: POLICY })).status).toBe(200);
    const key = await request("POST", "/customer/keys", { token: tokens.owner }, { label: "refund-bot for the customer service team" });
    expect(key.status).toBe(201);
    botKey = key.body.secret;
    const patched = await request("PATCH", `/customer/keys/${key.body.key_id}`, { token: tokens.owner }, {
      metadata: { agent: "refund-assistant-v2-production-eu-west", owner: "customer-service-platform-team@example.com", ticket: "OPS-48213" },
      actions: ["refund.issue", "refund.lookup", "payment.capture.partial"],
      limits: { protect_per_day: 1000, per_second: 5, burst: 10 },
      allowed_ips: ["127.0.0.0/8", "::1/128", "203.0.113.0/24", "2001:db8:abcd:12::/64"],
    });
    expect(patched.status).toBe(200);
    // Alice has her own tenant B and is the approver of A: in two tenants. The owner is an admin of B: in two as well.
    const alice = await request("POST", "/auth/signup", {}, { email: people.alice, password: PASSWORD });
    expect(alice.status).toBe(201);
    tokens.alice = alice.body.token;
    tenants.b = alice.body.tenant_id;
    const toA = await invite(tokens.owner, people.alice, "approver");
    expect((await request("POST", "/auth/invitations/accept", { token: tokens.alice }, { token: toA })).status).toBe(200);
    const toB = await invite(tokens.alice, people.owner, "admin");
    expect((await request("POST", "/auth/invitations/accept", { token: tokens.owner }, { token: toB })).status).toBe(200);
    // A pending approval, and a small refund allowed (a receipt to open).
    const held = await request("POST", "/v1/protect", { key: botKey }, { action: "refund.issue", resource: "order/8812-long-resource-identifier-for-wrapping", amount: 250, currency: "EUR" });
    expect(held.body.approval.status).toBe("pending");
    approval = { ...held.body.approval, receipt_id: held.body.receipt_id };
    expect((await request("POST", "/v1/protect", { key: botKey }, { action: "refund.issue", resource: "order/17", amount: 20, currency: "EUR" })).body.decision).toBe("ALLOWED");
  }, 180_000);

  afterAll(async () => {
    await run?.close();
    receiver?.stop();
  }, 60_000);

  test(
    "webhooks: add an endpoint (secret once), send a test event that arrives signed, see a failure's reason and next try, rotate, delete",
    async () => {
      await page.setViewportSize({ width: 1280, height: 900 });
      await logIn(page, people.owner);
      await intoTenant(page, tenants.a);
      await page.goto(`${origin}/console/webhooks`);
      await heading(page, "Webhooks");
      await page.getByTestId("no-webhooks").waitFor();

      // An endpoint that takes everything.
      await page.getByLabel("URL").fill(`${receiver.base}/ok?console`);
      await page.getByRole("button", { name: "Add endpoint" }).click();
      const reveal = page.getByTestId("secret-reveal");
      await reveal.waitFor();
      expect(await reveal.textContent()).toContain("shown only once");
      const secret = await page.getByTestId("secret-value").inputValue();
      expect(secret).toMatch(/^whsec_/);
      await reveal.getByRole("button", { name: "I have stored it" }).click();
      const okRow = page.locator("li.endpoint", { hasText: "/ok?console" });
      await okRow.waitFor();
      expect(await okRow.textContent()).toContain("every event");
      await okRow.getByRole("button", { name: "Send test event" }).click();
      const [received] = await receiver.waitFor("/ok?console");
      expect(new Webhook(secret).verify(received!.body, received!.headers as any)).toMatchObject({ type: "webhook.test" });
      const deliveries = page.getByTestId("deliveries");
      await deliveries.waitFor();
      for (let i = 0; i < 50 && !(await deliveries.locator(".badge.delivered").count()); i++) {
        await deliveries.getByRole("button", { name: "Refresh" }).click();
        await Bun.sleep(200);
      }
      expect(await deliveries.locator("tbody tr").first().textContent()).toContain("HTTP 204");

      // An endpoint that fails, for two events only: its delivery says why and when it is tried again.
      await page.getByLabel("URL").fill(`${receiver.base}/fail`);
      await page.getByLabel("Every event, also those added later").uncheck();
      await page.getByLabel("approval.requested").check();
      await page.getByLabel("key.expiring").check();
      await page.getByRole("button", { name: "Add endpoint" }).click();
      await reveal.waitFor();
      await reveal.getByRole("button", { name: "I have stored it" }).click();
      const failRow = page.locator("li.endpoint", { hasText: "/fail" });
      await failRow.waitFor();
      expect(await failRow.textContent()).toContain("approval.requested, key.expiring");
      failingHook = (await failRow.getAttribute("data-webhook-id"))!;
      await failRow.getByRole("button", { name: "Send test event" }).click();
      await receiver.waitFor("/fail");
      const reason = deliveries.getByTestId("delivery-reason");
      for (let i = 0; i < 50 && !(await reason.count()); i++) {
        await deliveries.getByRole("button", { name: "Refresh" }).click();
        await Bun.sleep(200);
      }
      expect(await reason.first().textContent()).toBe("Why: HTTP 500 Internal Server Error");
      const failed = deliveries.locator("tbody tr").first();
      expect(await failed.textContent()).toContain("pending");
      expect(await failed.locator("td[data-label='Next try'] time").count()).toBe(1);
      await shot(page, "webhooks-deliveries-1280");

      // Rotate: a new secret, shown once.
      await failRow.getByRole("button", { name: "Rotate secret" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Rotate secret" }).click();
      await reveal.waitFor();
      const rotated = await page.getByTestId("secret-value").inputValue();
      expect(rotated).toMatch(/^whsec_/);
      expect(rotated).not.toBe(secret);
      await reveal.getByRole("button", { name: "I have stored it" }).click();

      // Delete the endpoint that takes everything.
      await okRow.getByRole("button", { name: "Delete" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Delete endpoint" }).click();
      await okRow.waitFor({ state: "detached" });
      const list = await request("GET", "/customer/webhooks", { token: tokens.owner });
      expect(list.body.webhooks.map((w: { webhook_id: string }) => w.webhook_id)).toEqual([failingHook]);
    },
    STEP_MS,
  );

  /** Every page of the console, signed in, with what to wait for before measuring. */
  const privatePages = () => [
    { path: "dashboard", ready: '[data-testid="plan"]' },
    { path: "keys", ready: '[data-testid="keys-table"]' },
    { path: "receipts", ready: "main table" },
    { path: `receipts/${approval.receipt_id}`, ready: "main dl, main pre" },
    { path: "approvals", ready: '[data-testid="pending-table"]' },
    { path: `approvals/${approval.approval_id}`, ready: '[data-testid="hash-checked"]' },
    { path: "policy", ready: "main h2" },
    { path: "plan", ready: "main h2" },
    { path: "members", ready: "main table" },
    { path: "webhooks", ready: '[data-testid="webhooks-list"]' },
    { path: "entities", ready: '[data-testid="entities-empty"], [data-testid="entities-table"]' },
    { path: "audit", ready: "main table" },
    { path: "account", ready: "main h2" },
    { path: "mailbox", ready: "main p" },
    { path: "no-such-page", ready: '[data-testid="not-found"]' },
  ];
  const publicPages = [
    { path: "login", ready: "main form" },
    { path: "mailbox", ready: "main p" },
    { path: "signup", ready: "main form" },
    { path: "forgot", ready: "main form" },
    { path: "reset?token=x", ready: "main h1" },
    { path: "verify?token=x", ready: "main h1" },
    { path: "invitation?token=x", ready: "main h1" },
  ];

  const sweep = async (p: Page, width: number, pages: { path: string; ready: string }[], who: string) => {
    const found: Record<string, string[]> = {};
    for (const { path, ready } of pages) {
      await p.goto(`${origin}/console/${path}`);
      await p.locator("main h1").first().waitFor();
      await p.locator(ready).first().waitFor();
      // Data that arrives after the heading (names, counts) may widen a table: let it land.
      await p.waitForLoadState("networkidle").catch(() => undefined);
      if (path === "webhooks") {
        await p.locator(`li.endpoint[data-webhook-id="${failingHook}"]`).getByRole("button", { name: "Deliveries" }).click();
        await p.getByTestId("delivery-reason").first().waitFor();
      }
      const over = await overflowing(p);
      // A checkbox sits beside the first line of its label, not above it.
      over.push(
        ...(await p.evaluate(() =>
          [...document.querySelectorAll(".check")].flatMap((row) => {
            const box = row.querySelector("input")?.getBoundingClientRect();
            const label = row.querySelector("label")?.getBoundingClientRect();
            if (!box || !label || box.width === 0) return [];
            return Math.abs(box.top - label.top) > 8 || box.right > label.left ? [`checkbox ${row.querySelector("input")!.id} at ${box.top}, its label at ${label.top}`] : [];
          }),
        )),
      );
      if (over.length) found[path] = over;
      await shot(p, `${who}-${path.replace(/[/?=]/g, "_")}-${width}`);
    }
    return found;
  };

  test(
    "every page at 390 px and at 1280 px: no horizontal scroll in the page or any panel (owner of one tenant, admin of another)",
    async () => {
      const found: Record<string, Record<string, string[]>> = {};
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 844 });
        const over = await sweep(page, width, privatePages(), "owner");
        if (Object.keys(over).length) found[width] = over;
      }
      expect(found).toEqual({});
    },
    STEP_MS * 2,
  );

  test(
    "every public page at 390 px and at 1280 px, signed out",
    async () => {
      const signedOut = await run.context.newPage();
      signedOut.setDefaultTimeout(20_000);
      signedOut.on("pageerror", (e) => run.pageErrors.push(String(e)));
      const found: Record<string, Record<string, string[]>> = {};
      for (const width of WIDTHS) {
        await signedOut.setViewportSize({ width, height: 844 });
        const over = await sweep(signedOut, width, publicPages, "public");
        if (Object.keys(over).length) found[width] = over;
      }
      await signedOut.close();
      expect(found).toEqual({});
    },
    STEP_MS,
  );

  test(
    "an approver in two tenants votes from a 390 px page: switches tenant, reads the exact input and who asked with which key, approves with a comment, verifies the bundle",
    async () => {
      const phone = await run.context.newPage();
      phone.setDefaultTimeout(20_000);
      phone.on("pageerror", (e) => run.pageErrors.push(String(e)));
      await phone.setViewportSize({ width: 390, height: 844 });
      await phone.bringToFront();
      await logIn(phone, people.alice);
      // Into tenant A, where she approves.
      expect(await overflowing(phone)).toEqual([]);
      await shot(phone, "approver-dashboard-390");
      await intoTenant(phone, tenants.a);
      expect(await overflowing(phone)).toEqual([]);
      // Her dashboard tells an approver what she does here, not to try or rotate a key she did not make.
      await phone.goto(`${origin}/console/dashboard`);
      await phone.getByTestId("plan").waitFor();
      const part = phone.getByTestId("your-part");
      await part.waitFor();
      expect(await part.textContent()).toContain("You are an approver");
      expect(await phone.getByTestId("next-step").count()).toBe(0);
      expect(await overflowing(phone)).toEqual([]);
      await phone.goto(`${origin}/console/approvals`);
      await heading(phone, "Approvals");
      const row = phone.getByTestId("pending-table").locator(`tr[data-approval-id="${approval.approval_id}"]`);
      await row.waitFor();
      expect(await overflowing(phone)).toEqual([]);
      await shot(phone, "approver-inbox-390");
      await row.getByRole("link", { name: "refund.issue" }).click();
      await heading(phone, /Approval/);
      await phone.getByTestId("hash-checked").waitFor();
      expect(JSON.parse((await phone.getByTestId("approval-input-json").textContent())!)).toMatchObject({ amount: 250, currency: "EUR" });
      const asked = await phone.getByTestId("approval-key").textContent();
      expect(asked).toContain("refund-bot");
      expect(asked).toContain(people.owner);
      expect(await overflowing(phone)).toEqual([]);
      await shot(phone, "approver-approval-390");
      // Every button of the vote is inside the screen and can be pressed.
      await phone.getByLabel("Comment (optional)").fill("Checked with the customer by phone.");
      await phone.getByRole("button", { name: "Approve", exact: true }).click();
      await phone.getByRole("dialog").getByRole("button", { name: "Approve request" }).click();
      await phone.getByTestId("approval-status").filter({ hasText: "approved" }).first().waitFor();
      await phone.getByRole("button", { name: "Verify the bundle in this browser" }).click();
      const result = phone.getByTestId("bundle-result");
      await result.waitFor();
      expect(await result.getAttribute("data-verified")).toBe("true");
      expect(await overflowing(phone)).toEqual([]);
      await shot(phone, "approver-approved-390");
      await phone.close();
    },
    STEP_MS,
  );

  test(
    "a key's edit panel closes when that key is rotated: it would edit the old key",
    async () => {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`${origin}/console/keys`);
      const row = page.getByTestId("keys-table").locator("tbody tr", { hasText: "default" });
      await row.getByRole("button", { name: "Edit" }).click();
      await page.getByTestId("key-editor").waitFor();
      await row.getByRole("button", { name: "Rotate" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Rotate key" }).click();
      await page.getByTestId("secret-reveal").waitFor();
      await page.getByTestId("key-editor").waitFor({ state: "detached" });
    },
    STEP_MS,
  );

  test("only the service's own origin was contacted, with no CSP violation or script error", () => {
    expectOnlyOwnOrigin(run);
  });
});
