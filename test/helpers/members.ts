// A member of each role for tests: the owner invites, the invited person accepts with the link's
// token, read from the outbox as the mail worker would open it.
import { expect } from "bun:test";
import { bearer } from "./accounts.ts";
import { call, GOOD_PASSWORD, testService, uniqueEmail } from "./service.ts";

export interface Member {
  email: string;
  token: string;
  memberId: string;
}

// Invitation mails claimed from the outbox by any call, by address: concurrent calls claim each other's.
const claimed = new Map<string, { token_sealed: string }>();

export async function addMember(ownerToken: string, role: string): Promise<Member> {
  const email = uniqueEmail(role);
  const token = await invitationToken(ownerToken, email, role);
  const accepted = await call("POST", "/auth/invitations/accept", { json: { token, password: GOOD_PASSWORD } });
  expect(accepted.status).toBe(200);
  return { email, token: accepted.body.token, memberId: accepted.body.member_id };
}

/** Invites `email` as `role` and returns the token of its link, read from the outbox. */
export async function invitationToken(ownerToken: string, email: string, role: string): Promise<string> {
  const { service } = await testService();
  const invited = await call("POST", "/customer/members/invitations", { json: { email, role }, headers: bearer(ownerToken) });
  expect(invited.status).toBe(201);
  let token: string | undefined;
  for (let i = 0; i < 100 && token === undefined; i++) {
    for (const r of await service.deps.db.query("outbox/claim", ["mail", 500, 60])) {
      if (r.kind === "member_invitation") claimed.set(r.recipient, r.data as { token_sealed: string });
    }
    const data = claimed.get(email);
    if (data) token = await service.deps.mailTokens.open(String(data.token_sealed), "member_invitation");
    else await Bun.sleep(20);
  }
  if (token === undefined) throw new Error(`no invitation mail to ${email} in the outbox`);
  return token;
}
