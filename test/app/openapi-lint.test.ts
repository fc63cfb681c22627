// The served /openapi.json under a maintained OpenAPI linter at its strict rules: Redocly CLI's
// recommended-strict (redocly.yaml names the one rule turned off and why; docs/decisions.md says
// why Redocly), through scripts/lint-openapi.ts, as `npm run lint:openapi` runs it.
import { expect, test } from "bun:test";
import { lintOpenApi } from "../../scripts/lint-openapi.ts";
import { call } from "../helpers/service.ts";

test("the served document passes Redocly's recommended-strict", async () => {
  const reply = await call("GET", "/openapi.json");
  const { code, output } = await lintOpenApi(reply.text);
  if (code !== 0) throw new Error(`redocly lint failed:\n${output}`);
  expect(output).toContain("Your API description is valid");
}, 60_000);

test("the same lint refuses what the document once had: no servers, a public operation without security, a `*` path parameter", async () => {
  const doc = (await call("GET", "/openapi.json")).body;
  delete doc.servers;
  delete doc.paths["/health"].get.security;
  doc.paths["/customer/receipts/tile/*"] = doc.paths["/customer/receipts/tile/{tile}"];
  delete doc.paths["/customer/receipts/tile/{tile}"];
  const { code, output } = await lintOpenApi(JSON.stringify(doc));
  expect(code).not.toBe(0);
  for (const rule of ["no-empty-servers", "security-defined", "path-parameters-defined"]) expect(output).toContain(rule);
}, 60_000);
