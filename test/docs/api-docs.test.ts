// docs/api.md is generated from GET /openapi.json (npm run docs:api). Rendered again here from the
// running app: when a route, schema or error code changes without the docs, this fails.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { API_DOC, renderApiDoc, type OpenApi } from "../../scripts/api-docs.ts";
import { call } from "../helpers/service.ts";

test("docs/api.md matches /openapi.json (regenerate with npm run docs:api)", async () => {
  const reply = await call("GET", "/openapi.json");
  expect(reply.status).toBe(200);
  const spec = reply.body as OpenApi;
  expect(Object.keys(spec.paths).length).toBeGreaterThan(20);
  expect(readFileSync(API_DOC, "utf8")).toBe(renderApiDoc(spec));
});

test("every operation of /openapi.json has its section and its index entry", async () => {
  const spec = (await call("GET", "/openapi.json")).body as OpenApi;
  const doc = readFileSync(API_DOC, "utf8");
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const method of Object.keys(methods)) {
      expect(doc).toContain(`\n### ${method.toUpperCase()} ${path}\n`);
      expect(doc).toContain(`| ${method.toUpperCase()} | [\`${path}\`]`);
    }
  }
});
