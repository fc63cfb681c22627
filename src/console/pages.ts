// The console's client-side pages. Shared by the server, which answers index.html for exactly
// these paths under /console (anything else there is a JSON 404), and the browser's router.
// The development mailbox is public: a newcomer invited by email has no account to sign in with yet.
export const PUBLIC_PAGES = ["login", "signup", "forgot", "reset", "verify", "invitation", "mailbox"] as const;
export const PRIVATE_PAGES = ["dashboard", "keys", "receipts", "approvals", "policy", "plan", "members", "webhooks", "gateways", "entities", "audit", "account", "agents", "consent"] as const;

export type Page = (typeof PUBLIC_PAGES)[number] | (typeof PRIVATE_PAGES)[number] | "home" | "receipt" | "approval";

const RECEIPT = /^receipts\/(rcpt_[A-Za-z0-9]{1,100})$/;
// The approval email's link (src/approvals/mail.ts) lands here.
const APPROVAL = /^approvals\/(apv_[A-Za-z0-9]{1,100})$/;
const NAMED: ReadonlySet<string> = new Set<string>([...PUBLIC_PAGES, ...PRIVATE_PAGES]);

/** The page that `rest` (the path after "/console/", or "" for /console) names; undefined when none. */
export function pageOf(rest: string): { page: Page; id?: string } | undefined {
  const path = rest.replace(/\/$/, "");
  if (path === "") return { page: "home" };
  if (NAMED.has(path)) return { page: path as Page };
  const receipt = RECEIPT.exec(path);
  if (receipt) return { page: "receipt", id: receipt[1] };
  const approval = APPROVAL.exec(path);
  return approval ? { page: "approval", id: approval[1] } : undefined;
}

export function isPublicPage(page: Page): boolean {
  return (PUBLIC_PAGES as readonly string[]).includes(page);
}
