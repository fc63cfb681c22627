// Casbin (casbin, installed by the bench in the directory given) behind the minimal HTTPS server:
// the model and policy lines of bench/peers/casbin/ loaded once into an enforcer, each request
// decided by enforce(key, action, amount, currency).
//   bun scripts/bench/peers/casbin.ts PEERS_DIR TLS_DIR
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { serveDecisions } from "./https.ts";

const [peersDir, tlsDir] = process.argv.slice(2);
const casbin = await import(join(peersDir, "node_modules/casbin/lib/cjs/index.js"));
const dir = join(import.meta.dir, "../../../bench/peers/casbin");
const model = casbin.newModelFromString(readFileSync(join(dir, "model.conf"), "utf8"));
const enforcer = await casbin.newEnforcer(model, new casbin.StringAdapter(readFileSync(join(dir, "policy.csv"), "utf8")));

// Warden's amounts are numbers only; Casbin's matcher would compare a string by JavaScript's rules.
await serveDecisions(tlsDir, "", (principal, input) =>
  enforcer.enforce(principal, input.action, typeof input.amount === "number" ? input.amount : undefined, input.currency) as Promise<boolean>,
);
