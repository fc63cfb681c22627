// Teams in a real browser (./chromium.ts): an owner invites two people from the Members page; one
// is new to warden and joins from the emailed link by choosing a password, the other already has
// an account (and a tenant of their own) and joins with their session, then switches between
// their tenants. Roles that cannot write see no write buttons; a removal may revoke the member's
// keys, and the removed member's next request ends their session; invited again, they join with
// their own password; the Audit page lists all of it and an entry verifies in the browser.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { linkToken, type Inbox } from "../helpers/mail.ts";
import { uniqueEmail } from "../helpers/service.ts";
import { chromiumAvailable, expectOnlyOwnOrigin, insecure, openConsoleInBrowser, testChromiumInstalled, type ConsoleInBrowser } from "./chromium.ts";

const STEP_MS = 60_000;
const PASSWORD = "a quiet harbour at dawn";

testChromiumInstalled();

describe.skipIf(!chromiumAvailable)("teams in the console", () => {
  let run: ConsoleInBrowser;
  let inbox: Inbox;
  let origin: string;
  let owner: Page;
  let newcomer: Page;
  let colleague: Page;
  const people = { owner: uniqueEmail("owner"), newcomer: uniqueEmail("newcomer"), colleague: uniqueEmail("colleague") };

  const signupByApi = async (email: string) => {
    const reply = await fetch(`${origin}/auth/signup`, { ...insecure, method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password: PASSWORD }) });
    expect(reply.status).toBe(201);
  };
  const heading = (page: Page, title: string | RegExp) => page.getByRole("heading", { level: 1, name: title }).waitFor();
  const goTo = async (page: Page, label: string, title: string | RegExp) => {
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: label, exact: true }).click();
    await heading(page, title);
  };
  const logIn = async (page: Page, email: string, url = `${origin}/console/login`) => {
    await page.goto(url);
    await heading(page, "Log in");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
  };
  const invite = async (email: string, role: string) => {
    await owner.getByRole("textbox", { name: "Email" }).fill(email);
    await owner.getByLabel("Role", { exact: true }).selectOption(role);
    await owner.getByRole("button", { name: "Send invitation" }).click();
    await owner.getByTestId("invitation-sent").filter({ hasText: email }).waitFor();
    await owner.getByTestId("invitations-table").locator("tr", { hasText: email }).waitFor();
  };
  const newPage = async () => {
    const page = await run.context.newPage();
    page.setDefaultTimeout(20_000);
    page.on("pageerror", (e) => run.pageErrors.push(String(e)));
    return page;
  };

  beforeAll(async () => {
    run = await openConsoleInBrowser("teams");
    ({ inbox, origin } = run);
    owner = run.page;
    await signupByApi(people.owner);
    await signupByApi(people.colleague);
  }, 120_000);

  afterAll(() => run?.close(), 60_000);

  test(
    "the owner invites a new person and an existing one from the Members page",
    async () => {
      await logIn(owner, people.owner);
      await owner.waitForURL(/\/console\/dashboard$/);
      await goTo(owner, "Members", "Members");
      expect(await owner.getByTestId("members-table").locator("tr", { hasText: people.owner }).locator(".badge").textContent()).toBe("owner");
      // A bad address is refused at the field.
      await owner.getByRole("textbox", { name: "Email" }).fill("not-an-email");
      await owner.getByRole("button", { name: "Send invitation" }).click();
      await owner.locator(".field-error").first().waitFor();
      await invite(people.newcomer, "developer");
      await invite(people.colleague, "viewer");
      // Inviting the same address again while it is pending: refused, nothing lost.
      await run.shot("01-members-invited");
    },
    STEP_MS,
  );

  test(
    "a new person joins from the emailed link by choosing a password, and sees what a developer may do",
    async () => {
      const [mail] = await inbox.waitFor(people.newcomer);
      const token = linkToken(mail, "/console/invitation", origin);
      newcomer = await newPage();
      await newcomer.goto(`${origin}/console/invitation?token=${token}`);
      await heading(newcomer, "Join a tenant");
      // The token leaves the address bar at once.
      await newcomer.waitForURL(`${origin}/console/invitation`);
      await newcomer.getByLabel("Password", { exact: true }).fill(PASSWORD);
      await newcomer.getByLabel("Repeat the password").fill(PASSWORD);
      await newcomer.getByRole("button", { name: "Set password and join" }).click();
      await newcomer.waitForURL(/\/console\/dashboard$/);
      await goTo(newcomer, "Account", "Account");
      expect(await newcomer.getByTestId("account-role").textContent()).toBe("developer");
      // A developer makes keys, but neither invites nor publishes.
      await goTo(newcomer, "Keys", "API keys");
      await newcomer.getByRole("button", { name: "Create key" }).waitFor();
      await goTo(newcomer, "Members", "Members");
      expect(await newcomer.getByRole("button", { name: "Send invitation" }).count()).toBe(0);
      expect(await newcomer.getByRole("button", { name: "Save settings" }).count()).toBe(0);
      await run.shot("02-newcomer-members");
      // The link worked once.
      const again = await fetch(`${origin}/auth/invitations/accept`, { ...insecure, method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token, password: PASSWORD }) });
      expect(again.status).toBe(400);
    },
    STEP_MS,
  );

  test(
    "a person with an account logs in from the link, joins with their session, and switches tenants",
    async () => {
      // Their signup's verification mail came first.
      const mail = (await inbox.waitFor(people.colleague, 2)).find((m) => /invited/.test(m.parsed.subject ?? ""))!;
      const token = linkToken(mail, "/console/invitation", origin);
      colleague = await newPage();
      await colleague.goto(`${origin}/console/invitation?token=${token}`);
      await heading(colleague, "Join a tenant");
      await colleague.getByRole("link", { name: "Log in to accept" }).first().click();
      await heading(colleague, "Log in");
      await colleague.getByLabel("Email").fill(people.colleague);
      await colleague.getByLabel("Password").fill(PASSWORD);
      await colleague.getByRole("button", { name: "Log in" }).click();
      // Back on the invitation, signed in: join as themself.
      await heading(colleague, "Join a tenant");
      await colleague.getByRole("button", { name: `Join as ${people.colleague}` }).click();
      await colleague.waitForURL(/\/console\/dashboard$/);

      // In the owner's tenant as a viewer: keys are listed, with no button to change them.
      const switcher = colleague.getByLabel("Tenant");
      await switcher.waitFor();
      expect(await switcher.locator("option:checked").textContent()).toBe(`${people.owner}'s tenant (viewer)`);
      await goTo(colleague, "Keys", "API keys");
      await colleague.getByTestId("keys-table").locator("tbody tr").first().waitFor();
      expect(await colleague.getByText("you", { exact: true }).count()).toBe(0);
      await colleague.getByTestId("keys-table").getByText(people.owner).first().waitFor();
      for (const name of ["Create key", "Rotate", "Revoke"]) expect(await colleague.getByRole("button", { name }).count()).toBe(0);
      await goTo(colleague, "Policy", "Policy");
      expect(await colleague.getByRole("button", { name: /Publish/ }).count()).toBe(0);
      await goTo(colleague, "Plan", "Plan");
      await colleague.getByTestId("upgrade-needs-owner").waitFor();
      await run.shot("03-viewer-keys");

      // Their own tenant: owner there, and the write buttons are back.
      await switcher.selectOption({ label: `${people.colleague}'s tenant (owner)` });
      await colleague.getByTestId("status").filter({ hasText: "Switched to" }).waitFor();
      await goTo(colleague, "Keys", "API keys");
      await colleague.getByRole("button", { name: "Create key" }).waitFor();
      expect(await colleague.getByLabel("Tenant").locator("option:checked").textContent()).toBe(`${people.colleague}'s tenant (owner)`);
    },
    STEP_MS,
  );

  test(
    "the owner changes a role and removes a member; the removed member's next request ends their session",
    async () => {
      await owner.reload();
      await heading(owner, "Members");
      const colleagueRow = owner.getByTestId("members-table").locator("tr", { hasText: people.colleague });
      await colleagueRow.getByLabel(`Role of ${people.colleague}`).selectOption("approver");
      await colleagueRow.getByRole("button", { name: "Save role" }).click();
      await owner.getByTestId("status").filter({ hasText: `${people.colleague} is now approver` }).waitFor();

      // The newcomer made a key; the removal's dialog lists it, and revokes it when asked.
      const login = await fetch(`${origin}/auth/login`, { ...insecure, method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: people.newcomer, password: PASSWORD }) });
      const made = await fetch(`${origin}/customer/keys`, {
        ...insecure, method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${((await login.json()) as { token: string }).token}` }, body: JSON.stringify({ label: "newcomer's bot" }),
      });
      const key = (await made.json()) as { key_id: string; secret: string };
      await owner.reload();
      await heading(owner, "Members");
      const newcomerRow = owner.getByTestId("members-table").locator("tr", { hasText: people.newcomer });
      await newcomerRow.getByRole("button", { name: "Remove" }).click();
      const dialog = owner.getByRole("dialog");
      await dialog.getByTestId("member-keys").getByText("newcomer's bot").waitFor();
      await dialog.getByLabel("Revoke this key too").check();
      await dialog.getByRole("button", { name: "Remove member" }).click();
      await owner.getByTestId("status").filter({ hasText: `${people.newcomer} was removed` }).waitFor();
      await owner.getByTestId("status").filter({ hasText: "Revoked: newcomer's bot" }).waitFor();
      const protect = await fetch(`${origin}/v1/protect`, { ...insecure, method: "POST", headers: { "content-type": "application/json", "x-api-key": key.secret }, body: JSON.stringify({ action: "document.read" }) });
      expect(protect.status).toBe(401);
      expect(await owner.getByTestId("members-table").locator("tr", { hasText: people.newcomer }).count()).toBe(0);

      // The newcomer's next click: the session is over, and the console says so by asking to log in.
      await newcomer.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Keys", exact: true }).click();
      await newcomer.waitForURL(/\/console\/login/);
    },
    STEP_MS,
  );

  test(
    "the removed newcomer, who can no longer log in, is invited again and joins from the link with their own password",
    async () => {
      await invite(people.newcomer, "viewer");
      const mails = await inbox.waitFor(people.newcomer, 2);
      const token = linkToken(mails[mails.length - 1], "/console/invitation", origin);
      await newcomer.goto(`${origin}/console/invitation?token=${token}`);
      await heading(newcomer, "Join a tenant");
      await newcomer.getByRole("heading", { name: "Join with your account" }).waitFor();
      await newcomer.getByLabel("Password", { exact: true }).fill(PASSWORD);
      await newcomer.getByRole("button", { name: "Join", exact: true }).click();
      await newcomer.waitForURL(/\/console\/dashboard$/);
      await goTo(newcomer, "Account", "Account");
      expect(await newcomer.getByTestId("account-role").textContent()).toBe("viewer");
      await run.shot("04-rejoined");
    },
    STEP_MS,
  );

  test(
    "the Audit page lists who did what, and an entry verifies in the browser",
    async () => {
      await goTo(owner, "Audit", "Audit trail");
      const table = owner.getByTestId("audit-table");
      for (const event of ["member.invited", "member.joined", "member.role_changed", "member.removed"]) await table.locator(`tr[data-event="${event}"]`).first().waitFor();
      // The joins were done by the people who joined; the rest by the owner, named by email.
      await table.locator('tr[data-event="member.joined"]', { hasText: people.colleague }).waitFor();
      await table.locator('tr[data-event="member.removed"]', { hasText: "you" }).waitFor();
      await owner.getByLabel("Show").selectOption("member.joined");
      await owner.waitForFunction(() => [...document.querySelectorAll("[data-testid=audit-table] tbody tr")].every((tr) => tr.getAttribute("data-event") === "member.joined"));
      // The colleague once, the newcomer twice (they joined again).
      expect(await table.locator("tbody tr").count()).toBe(3);
      await run.shot("05-audit");

      await table.locator("tbody tr").first().getByRole("link").click();
      await heading(owner, /Receipt/);
      await owner.getByRole("button", { name: "Verify in this browser" }).click();
      const result = owner.getByTestId("verify-result");
      await result.waitFor();
      expect(await result.getAttribute("data-verified")).toBe("true");
      expectOnlyOwnOrigin(run);
    },
    STEP_MS,
  );
});
