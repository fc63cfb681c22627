// What scripts/bench/append.ts and append-functions.ts append: 16 free tenants with a key each,
// signed up straight through the SQL, and protect items for receipt_append() spread over them,
// made before any clock starts.
import type { Db } from "../../src/db/index.ts";
import { newId } from "../../src/ids.ts";
import { hashSecret, newSecret, secretHint } from "../../src/keys/secret.ts";
import { canonicalJson } from "../../src/crypto/canonical.ts";
import { sha256HexSync } from "../../src/crypto/sync.ts";

export const TENANTS = 16;
/** A free tenant stores 1,000 receipts and counts 1,000 protects a day: what one may be sent. */
export const PER_TENANT_LIMIT = 1000;

export interface AppendTenant {
  tenantId: string;
  keyId: string;
}

export async function appendTenants(db: Db): Promise<AppendTenant[]> {
  const tenants: AppendTenant[] = [];
  for (let i = 0; i < TENANTS; i++) {
    const secret = newSecret();
    const t = { tenantId: newId("cust_"), keyId: newId("key_") };
    await db.query("accounts/signup", [t.tenantId, newId("acct_"), newId("mbr_"), `append.${Date.now()}.${i}@example.com`, "$2b$04$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234", t.keyId, await hashSecret(secret), secretHint(secret)]);
    tenants.push(t);
  }
  return tenants;
}

let n = 0;

/** One ALLOWED protect of tenant t, as the service would send it (a fixed signature's shape). */
export function appendItem(t: AppendTenant) {
  n++;
  const payload = canonicalJson({ v: 2, kind: "protect", input: { action: "document.read", resource: `docs/${n}` }, policy: { policy_id: "pol_default", version: 1, hash: "0x" + "ab".repeat(32) }, decision: "ALLOWED", reasons: ["read_only"], rule: "allow_document_read" });
  return {
    receipt_id: newId("rcpt_"), tenant_id: t.tenantId, key_id: t.keyId, kind: "protect", request_id: newId("req_"),
    timestamp: new Date().toISOString(), decision: "ALLOWED", payload, content_hash: sha256HexSync(payload),
    signature: "eyJhbGciOiJFZERTQSJ9." + "x".repeat(250) + "." + "y".repeat(86), protect_receipt_id: null,
  };
}

/** size items, the tenants taken in turn from the first-th. */
export const appendItems = (tenants: AppendTenant[], size: number, first = 0) =>
  Array.from({ length: size }, (_, i) => appendItem(tenants[(first + i) % tenants.length]!));
