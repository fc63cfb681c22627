// Every route of the OpenAPI document that takes a session, called by a member of each role: the
// roles table (src/accounts/roles.ts) names the route, and the service answers 403 forbidden_role
// with that table's required_role exactly to the roles ranked below it. A route added without an
// entry in the table fails the first test.
import { beforeAll, describe, expect, test } from "bun:test";
import { ROLES, ROUTE_ROLES, roleAtLeast, type Role } from "../../src/accounts/roles.ts";
import { bearer } from "../helpers/accounts.ts";
import { call, signup } from "../helpers/service.ts";
import { addMember } from "../helpers/members.ts";

interface Operation { method: string; path: string; route: string }

let operations: Operation[] = [];
const tokens = new Map<Role, string>();

beforeAll(async () => {
  const doc = (await call("GET", "/openapi.json")).body as { paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>> };
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      // A session it requires (accepting an invitation takes one only when there is one, `{}`).
      if (!op.security?.some((s) => "bearer" in s) || op.security.some((s) => Object.keys(s).length === 0)) continue;
      // The tile route's wildcard is {tile} in the document (src/app/openapi.ts).
      operations.push({ method: method.toUpperCase(), path, route: path.replace("/tile/{tile}", "/tile/*").replace(/\{([^}]+)\}/g, ":$1") });
    }
  }
  // One tenant with a member of each role, each invited by its owner and accepted from the link's token.
  const owner = await signup();
  tokens.set("owner", owner.token);
  for (const role of ROLES.filter((r) => r !== "owner")) tokens.set(role, (await addMember(owner.token, role)).token);
});

describe("the role matrix", () => {
  test("every session route of the OpenAPI document has an entry in the roles table, and every entry a route", () => {
    expect(operations.length).toBeGreaterThan(30);
    const documented = new Set(operations.map((o) => `${o.method} ${o.route}`));
    expect(operations.filter((o) => ROUTE_ROLES[`${o.method} ${o.route}`] === undefined).map((o) => `${o.method} ${o.path}`)).toEqual([]);
    expect(Object.keys(ROUTE_ROLES).filter((entry) => !documented.has(entry))).toEqual([]);
  });

  test("each route x each role: allowed, or 403 forbidden_role with required_role", async () => {
    const wrong: string[] = [];
    for (const op of operations) {
      const needed = ROUTE_ROLES[`${op.method} ${op.route}`]!;
      // Nothing below viewer: such a route refuses no role (and may end the caller's session, as logout does).
      if (needed === "viewer") continue;
      const url = op.path.replace(/\{[^}]+\}/g, (p) => (p.includes("version") ? "999999" : "x_nothing"));
      for (const role of ROLES) {
        const reply = await call(op.method, url, { json: op.method === "GET" || op.method === "DELETE" ? undefined : {}, headers: bearer(tokens.get(role)!) });
        const refused = reply.status === 403 && reply.body?.error === "forbidden_role";
        const expected = !roleAtLeast(role, needed);
        if (refused !== expected || (refused && reply.body.required_role !== needed)) wrong.push(`${op.method} ${op.path} as ${role}: ${reply.status} ${reply.text.slice(0, 120)}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
