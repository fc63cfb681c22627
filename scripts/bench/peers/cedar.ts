// Cedar (@cedar-policy/cedar-wasm, installed by the bench in the directory given) behind the
// minimal HTTPS server: the policy set bench/peers/cedar/payment-limits.cedar parsed once, each
// request decided by statefulIsAuthorized (no parse per request).
//   bun scripts/bench/peers/cedar.ts PEERS_DIR TLS_DIR
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { serveDecisions } from "./https.ts";

const [peersDir, tlsDir] = process.argv.slice(2);
const cedar = await import(join(peersDir, "node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm.js"));
const policies = readFileSync(join(import.meta.dir, "../../../bench/peers/cedar/payment-limits.cedar"), "utf8");
const parsed = cedar.preparsePolicySet("payment-limits", { staticPolicies: policies });
if (parsed.type !== "success") throw new Error(`cedar: ${JSON.stringify(parsed.errors)}`);

/** Cedar has no floating-point numbers: an amount is a decimal (at most 4 places). */
const decimal = (n: number) => ({ __extn: { fn: "decimal", arg: Number.isInteger(n) ? n.toFixed(1) : String(n) } });

await serveDecisions(tlsDir, `Cedar ${cedar.getCedarVersion()}, language ${cedar.getCedarLangVersion()}`, (principal, input) => {
  const context: Record<string, unknown> = {};
  if (typeof input.amount === "number") context.amount = decimal(input.amount);
  else if (input.amount !== undefined) context.amount = input.amount;
  if (input.currency !== undefined) context.currency = input.currency;
  const answer = cedar.statefulIsAuthorized({
    principal: { type: "Key", id: principal },
    action: { type: "Action", id: input.action },
    resource: { type: "Resource", id: input.resource ?? "-" },
    context,
    preparsedPolicySetId: "payment-limits",
    entities: [],
  });
  if (answer.type !== "success") throw new Error(`cedar: ${JSON.stringify(answer.errors)}`);
  return answer.response.decision === "allow";
});
