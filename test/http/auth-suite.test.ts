// Every protected route through the shared authentication suite (test/helpers/auth-suite.ts):
// no credential, bad credential, revoked key, another tenant's ids. Add new routes here.
import { authSuite, makeFixture, type Fixture, type ProtectedRoute } from "../helpers/auth-suite.ts";
import { DEFAULT_POLICY } from "../../src/simulation/policy.ts";
import { call } from "../helpers/service.ts";

let shared: Promise<Fixture> | undefined;
const fixture = () =>
  (shared ??= makeFixture(async (f) => {
    const receipt = await call("POST", "/v1/protect", { json: { action: "document.read" }, headers: { "x-api-key": f.owner.apiKey } });
    // Keys of their own for rotate and revoke: the owner's accepted call changes them.
    const jwt = { authorization: `Bearer ${f.owner.token}` };
    const [toRotate, toRevoke] = await Promise.all(["rotate me", "revoke me"].map((label) => call("POST", "/customer/keys", { json: { label }, headers: jwt })));
    const upgrade = await call("POST", "/customer/upgrades/request", { json: { requested_plan: "enterprise", reason: "suite" }, headers: jwt });
    return { receipt: receipt.body.receipt_id, rotate: toRotate.body.key_id, revoke: toRevoke.body.key_id, upgrade: upgrade.body.request_id };
  }));

const ROUTES: ProtectedRoute[] = [
  // Keys
  { method: "POST", path: () => "/customer/keys", auth: "jwt", json: () => ({ label: "suite" }) },
  { method: "GET", path: () => "/customer/keys", auth: "jwt" },
  { method: "POST", path: (f) => `/customer/keys/${f.ids.revoke}/revoke`, auth: "jwt", owned: true },
  { method: "POST", path: (f) => `/customer/keys/${f.ids.rotate}/rotate`, auth: "jwt", owned: true },
  // Policy
  { method: "GET", path: () => "/customer/policy", auth: "jwt" },
  { method: "PUT", path: () => "/customer/policy", auth: "jwt", json: () => ({ document: DEFAULT_POLICY }) },
  // Receipts
  { method: "GET", path: () => "/customer/receipts", auth: "jwt" },
  { method: "GET", path: (f) => `/customer/receipts/${f.ids.receipt}`, auth: "jwt", owned: true },
  { method: "GET", path: (f) => `/customer/receipts/${f.ids.receipt}/proof`, auth: "jwt", owned: true },
  { method: "GET", path: () => "/customer/receipts/checkpoint", auth: "jwt" },
  { method: "GET", path: () => "/customer/receipts/consistency?from=1", auth: "jwt" },
  { method: "GET", path: () => "/customer/receipts/export", auth: "jwt" },
  // Plans
  { method: "POST", path: () => "/customer/upgrades/request", auth: "jwt", json: () => ({ requested_plan: "pro", reason: "suite" }) },
  { method: "GET", path: () => "/customer/upgrades", auth: "jwt" },
  { method: "POST", path: (f) => `/customer/upgrades/${f.ids.upgrade}/cancel`, auth: "jwt", owned: true },
  { method: "GET", path: () => "/customer/dashboard", auth: "jwt" },
  // Decisions
  { method: "POST", path: () => "/v1/protect", auth: "key", json: () => ({ action: "document.read" }) },
  { method: "POST", path: () => "/v1/execute", auth: "key", json: (f) => ({ receipt_id: f.ids.receipt }), owned: true },
  { method: "POST", path: () => "/v1/verify", auth: "key", json: () => ({ receipt: {} }) },
];

authSuite(ROUTES, fixture);
