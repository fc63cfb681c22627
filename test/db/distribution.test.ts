// docs/scaling.md: the tenant tables whose keys would block distributing them by tenant_id (Citus
// needs the distribution column in every primary key and unique constraint). The list is what is
// left to change; a new table or constraint that adds to it fails here until the doc says why.
import { expect, test } from "bun:test";
import { testService } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

const LEFT = [
  "api_keys.api_keys_pkey",
  "api_keys.api_keys_secret_hash_key",
  "approvals.approvals_execute_receipt_id_key",
  "approvals.approvals_outcome_receipt_id_key",
  "approvals.approvals_pkey",
  "approvals.approvals_protect_receipt_id_key",
  "audit_outbox.audit_outbox_pkey",
  "audit_outbox.audit_outbox_receipt_id_key",
  "member_invitations.member_invitations_pkey",
  "member_invitations.member_invitations_token_hash_key",
  "members.members_pkey",
  "outbox.outbox_pkey",
  "receipts.receipts_execute_once",
  "receipts.receipts_pkey",
  "upgrade_requests.upgrade_requests_pkey",
];

test("the tenant tables whose keys would block distribution by tenant_id are exactly the ones docs/scaling.md lists", async () => {
  const { db } = await testService();
  const rows = await testQuery<{ table_name: string; constraint_name: string }>(db, "distribution_blockers");
  expect(rows.map((r) => `${r.table_name}.${r.constraint_name}`)).toEqual(LEFT);
});
