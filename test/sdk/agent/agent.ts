// A small agent on the SDK, as a user of the npm package writes it: test/sdk/sdk.test.ts installs
// the built package into a scratch project, typechecks this file against it, and runs it on Node,
// Bun and Deno against a running service. (Left out of the repository's own typecheck: it imports
// the package, which exists only in that scratch project.)
import {
  createWarden,
  fetchJwks,
  fetchProofBundle,
  getCustomerLogTileByTile,
  postAccessV1Evaluation,
  postAuthSignup,
  postCustomerKeys,
  postV1Protect,
  verifyApprovalBundle,
  verifyProofBundle,
  verifyResult,
  verifyWebhook,
  WebhookVerificationError,
  type PostV1ProtectResponse,
} from "warden-sdk";
import input from "./input.json" with { type: "json" };

const { baseUrl, email, password, webhook, approval } = input;

// A person signs up; their session makes the agent its own key.
const anonymous = createWarden({ baseUrl });
const account = await postAuthSignup({ client: anonymous, body: { email, password }, throwOnError: true });
const session = createWarden({ baseUrl, token: account.data.token });
const key = await postCustomerKeys({ client: session, body: { label: "sdk agent" }, throwOnError: true });

// The agent asks before it pays, with its key only.
const agent = createWarden({ baseUrl, apiKey: key.data.secret });
const asked = await postV1Protect({ client: agent, body: { action: "payment.send", resource: "vendor/acme", amount: 250, currency: "USD" } });
if (asked.error) throw new Error(`protect refused: ${asked.error.error}`);
const decision: PostV1ProtectResponse = asked.data;

// Offline: the result against the service's public keys, then its place in the signed log.
const jwks = await fetchJwks(anonymous);
const result = await verifyResult(decision, jwks);
const tampered = await verifyResult({ ...decision, decision: decision.decision === "ALLOWED" ? "DENIED" : "ALLOWED" }, jwks);
const bundle = await fetchProofBundle(session, decision.receipt_id);
const proved = await verifyProofBundle(bundle, jwks);

// The log's level-0 tile as tlog clients read it, through the generated function: its path
// parameter holds slashes.
const tile = await getCustomerLogTileByTile({ client: session, path: { tile: `0/000.p/${bundle.checkpoint.tree_size}` }, throwOnError: true });

// An approval's bundle saved earlier (the test made it): who approved what, checked with only the
// public keys; the same bundle without its first vote no longer shows a quorum.
const approved = await verifyApprovalBundle(approval, jwks);
const withoutVote = { ...approval, receipts: approval.receipts.filter((_, i) => i !== 1), proofs: approval.proofs.filter((_, i) => i !== 1) };
const unproved = await verifyApprovalBundle(withoutVote, jwks);

// The same question the AuthZEN way, with the key as a bearer token.
const bearer = await postAccessV1Evaluation({
  client: anonymous,
  headers: { authorization: `Bearer ${key.data.secret}` },
  body: { subject: { type: "agent", id: "sdk" }, action: { name: "payment.send", properties: { amount: 250, currency: "USD" } }, resource: { type: "vendor", id: "acme" } },
  throwOnError: true,
});

// A webhook delivery signed elsewhere (by the standardwebhooks package), and the same one altered.
const event = await verifyWebhook(webhook.secret, webhook.body, webhook.headers);
const forged = await verifyWebhook(webhook.secret, webhook.body.replace("apv_", "apv_X"), webhook.headers).then(
  () => "accepted",
  (err: unknown) => (err instanceof WebhookVerificationError ? "refused" : String(err)),
);

console.log(
  JSON.stringify({
    decision: decision.decision,
    verified: result.verified,
    tampered: tampered.verified,
    proof: proved,
    tree_size: bundle.checkpoint.tree_size,
    tile_bytes: tile.data.size,
    approval: { verified: approved.verified, status: approved.status, approvers: approved.approvers.length, without_vote: unproved.verified },
    authzen: bearer.data,
    webhook: event.type,
    forged,
  }),
);
