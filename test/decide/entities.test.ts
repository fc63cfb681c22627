// Attribute conditions (docs/policy.md, "Entities and attributes"): the `where` language and its
// checks at the JSON path, decide() over entity facts and the reads it records, and the facts
// rebuilt from those reads deciding the same again.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { Value } from "@sinclair/typebox/value";
import { decide, whereHolds } from "../../src/decide/engine.ts";
import { entityRefs, factsFromReads, inlineFacts, readsEntities, unknownToStore, type AttributeValue, type EntityFacts, type InlineEntity } from "../../src/decide/entities.ts";
import { buildPayload } from "../../src/decide/payload.ts";
import { DEFAULT_POLICY, documentProblem, PolicyDocument, WhereOp, type ProtectInput } from "../../src/decide/policy.ts";

const doc = (rules: unknown[], entities?: unknown): PolicyDocument =>
  ({ default_effect: "deny", default_reason: "no_rule_matched", rules, ...(entities ? { entities } : {}) }) as PolicyDocument;
const allow = (when: unknown, id = "r") => ({ id, effect: "allow", reason: "ok", when });
const SUBJECT_SCHEMA = { subject: { types: ["user"], attributes: { roles: { type: "list" }, email: { type: "string" }, level: { type: "number" }, nick: { type: "string", optional: true } } } };

/** The first problem TypeBox or documentProblem() finds, as the service reports it: the JSON path and the message. */
function problemOf(document: unknown): string | undefined {
  const first = [...Value.Errors(PolicyDocument, document)][0];
  if (first) return `${first.path}: ${first.message}`;
  const p = documentProblem(document as PolicyDocument);
  return p ? `/${p.path}: ${p.message}` : undefined;
}

describe("the where language", () => {
  test("valid conditions: literals, refs, list operators, request paths", () => {
    const rules = [
      allow({ where: { "subject.attr.roles": { contains: "editor" }, "context.owner": { eq: { ref: "subject.attr.email" } } } }),
      allow({ where: { "subject.attr.roles": { any: ["admin", "editor"], all: ["viewer"] } } }),
      allow({ where: { "subject.attr.level": { gte: 3, lt: { ref: "amount" } }, "subject.id": { in: ["a", "b"] } } }),
      allow({ where: { "principal.key_id": { eq: { ref: "context.agent" } }, action: { prefix: "todo." }, resource: { exists: true } } }),
      allow({ where: { "subject.type": { eq: "user" }, "subject.attr.nick": { exists: false } } }),
      allow({ where: { "subject.attr.roles": { eq: { ref: "subject.attr.roles" } } } }),
    ];
    expect(problemOf(doc(rules, SUBJECT_SCHEMA))).toBeUndefined();
  });

  const refused: [what: string, rules: unknown[], path: RegExp][] = [
    ["an unknown path", [allow({ where: { "subject.name": { eq: "x" } } })], /^\/rules\/0\/when\/where\/subject\.name: /],
    ["an unknown operator", [allow({ where: { action: { like: "x" } } })], /^\/rules\/0\/when\/where\/action\/like: /],
    ["an empty operator object", [allow({ where: { action: {} } })], /^\/rules\/0\/when\/where\/action: /],
    ["a ref to an unknown path", [allow({ where: { action: { eq: { ref: "input.action" } } } })], /^\/rules\/0\/when\/where\/action\/eq: /],
    ["an empty list", [allow({ where: { "subject.attr.roles": { any: [] } } })], /^\/rules\/0\/when\/where\/subject\.attr\.roles\/any: /],
    ["an undeclared attribute", [allow({ where: { "subject.attr.rolse": { contains: "x" } } })], /^\/rules\/0\/when\/where\/subject\.attr\.rolse: subject\.attr\.rolse is not declared/],
    ["an undeclared attribute as an operand", [allow({ where: { action: { eq: { ref: "resource.attr.owner" } } } })], /^\/rules\/0\/when\/where\/action\/eq\/ref: resource\.attr\.owner is not declared/],
    ["a list tested with eq", [allow({ where: { "subject.attr.roles": { eq: "admin" } } })], /^\/rules\/0\/when\/where\/subject\.attr\.roles\/eq: .*declared as list/],
    ["a list compared with a scalar attribute", [allow({ where: { "subject.attr.roles": { ne: { ref: "subject.attr.email" } } } })], /^\/rules\/0\/when\/where\/subject\.attr\.roles\/ne\/ref: .*another list attribute/],
    ["contains on a string", [allow({ where: { "subject.attr.email": { contains: "a" } } })], /^\/rules\/0\/when\/where\/subject\.attr\.email\/contains: .*needs a list/],
    ["a bound on a string", [allow({ where: { "subject.attr.email": { gt: 3 } } })], /^\/rules\/0\/when\/where\/subject\.attr\.email\/gt: /],
    ["a literal of another type", [allow({ where: { "subject.attr.level": { eq: "3" } } })], /^\/rules\/0\/when\/where\/subject\.attr\.level\/eq: .*declared as number/],
    ["a list operand that is a string", [allow({ where: { action: { in: { ref: "subject.attr.email" } } } })], /^\/rules\/0\/when\/where\/action\/in\/ref: .*must be a list/],
    ["an unknown entity type", [allow({ where: { "subject.type": { eq: "usr" } } })], /^\/rules\/0\/when\/where\/subject\.type\/eq: unknown entity type/],
  ];
  for (const [what, rules, path] of refused) {
    test(`refused at its JSON path: ${what}`, () => {
      expect(problemOf(doc(rules, SUBJECT_SCHEMA)) ?? "accepted").toMatch(path);
    });
  }

  test("a policy reading attributes with no entity schema is refused; the schema's own shape is checked", () => {
    expect(problemOf(doc([allow({ where: { "subject.attr.roles": { contains: "x" } } })]))).toMatch(/is not declared: add "roles" to the document's entities\.subject\.attributes/);
    expect(problemOf(doc([], { subject: { attributes: { roles: { type: "set" } } } }))).toMatch(/^\/entities\/subject\/attributes\/roles\/type: /);
    expect(problemOf(doc([], { principal: { attributes: {} } }))).toMatch(/^\/entities\/principal: /);
    expect(problemOf(doc([], {}))).toMatch(/^\/entities: /);
  });

  test("readsEntities: only a where path or operand naming a stored attribute", () => {
    expect(readsEntities(DEFAULT_POLICY)).toBe(false);
    expect(readsEntities(doc([allow({ where: { "subject.id": { eq: "x" }, action: { eq: { ref: "context.a" } } } })]))).toBe(false);
    expect(readsEntities(doc([allow({ where: { action: { eq: { ref: "resource.attr.kind" } } } })]))).toBe(true);
    expect(readsEntities(doc([allow({ where: { "subject.attr.roles": { exists: true } } })]))).toBe(true);
  });
});

describe("where operators", () => {
  const world = (values: Record<string, AttributeValue>) => ({ value: (p: string) => values[p] });
  const rows: [op: unknown, value: AttributeValue | undefined, expected: boolean][] = [
    [{ contains: "a" }, ["a", "b"], true],
    [{ contains: "c" }, ["a", "b"], false],
    [{ contains: "1" }, [1, 2], false],
    [{ contains: "a" }, "a", false],
    [{ any: ["x", "b"] }, ["a", "b"], true],
    [{ any: ["x", "y"] }, ["a", "b"], false],
    [{ all: ["a", "b"] }, ["b", "a", "c"], true],
    [{ all: ["a", "d"] }, ["b", "a", "c"], false],
    [{ any: ["a"] }, "a", false],
    [{ eq: { ref: "context.other" } }, "x", true],
    [{ eq: { ref: "context.other" } }, "y", false],
    [{ eq: { ref: "subject.attr.list" } }, ["a", "b"], true],
    [{ eq: { ref: "subject.attr.list" } }, ["b", "a"], false],
    [{ in: { ref: "subject.attr.list" } }, "a", true],
    [{ in: { ref: "subject.attr.list" } }, "z", false],
    [{ not_in: { ref: "subject.attr.list" } }, "z", true],
    [{ contains: { ref: "context.other" } }, ["x"], true],
    [{ lt: { ref: "context.n" } }, 4, true],
    [{ lt: { ref: "context.n" } }, "4", false],
    [{ ne: { ref: "context.missing" } }, "x", false],
    [{ eq: { ref: "context.missing" } }, "x", false],
    [{ contains: "a" }, undefined, false],
    [{ exists: false }, undefined, true],
    [{ ne: "x" }, undefined, false],
  ];
  test.each(rows)("%j on %j -> %p", (op, value, expected) => {
    expect(Value.Check(WhereOp, op)).toBe(true);
    expect(whereHolds(op as WhereOp, value, world({ "context.other": "x", "subject.attr.list": ["a", "b"], "context.n": 5 }))).toBe(expected);
  });
});

describe("which entities an input names", () => {
  test("subject and resource from the AuthZEN context; else the resource split at its first /", () => {
    expect(entityRefs({ action: "a", context: { "subject.type": "user", "subject.id": "u1", "resource.type": "todo", "resource.id": "t/1" }, resource: "x/y" })).toEqual({
      subject: { type: "user", id: "u1" },
      resource: { type: "todo", id: "t/1" },
    });
    expect(entityRefs({ action: "a", resource: "todo/42/x" })).toEqual({ resource: { type: "todo", id: "42/x" } });
    expect(entityRefs({ action: "a", resource: "/42" })).toEqual({});
    expect(entityRefs({ action: "a", resource: "todo/" })).toEqual({});
    expect(entityRefs({ action: "a", context: { "subject.id": "u1" } })).toEqual({});
    expect(entityRefs({ action: "a", context: { "subject.type": "user", "subject.id": 5 } })).toEqual({});
  });
});

describe("decide() over entity facts", () => {
  const policy = doc(
    [
      allow({ actions: ["todo.update"], where: { "subject.attr.roles": { contains: "admin" } } }, "admins"),
      allow({ actions: ["todo.update"], where: { "subject.attr.roles": { contains: "editor" }, "resource.attr.owner": { eq: { ref: "subject.id" } } } }, "owners"),
    ],
    { subject: { attributes: { roles: { type: "list" } } }, resource: { types: ["todo"], attributes: { owner: { type: "string" } } } },
  );
  const input = (subject: string): ProtectInput => ({ action: "todo.update", resource: "todo/1", context: { "subject.type": "user", "subject.id": subject } });
  const user = (id: string, roles: string[], version = 3) => ({ type: "user", id, attributes: { roles }, version });
  const todo = { type: "todo", id: "1", attributes: { owner: "morty" }, version: 7 };

  test("an admin; an editor on their own todo; not on another's; reads in evaluation order", () => {
    const rick = decide(input("rick"), policy, undefined, undefined, { subject: user("rick", ["admin"]), resource: todo });
    expect([rick.decision, rick.rule]).toEqual(["ALLOWED", "admins"]);
    expect(rick.entities).toEqual([{ entity: "subject", type: "user", id: "rick", attribute: "roles", value: ["admin"], version: 3 }]);

    const morty = decide(input("morty"), policy, undefined, undefined, { subject: user("morty", ["editor"]), resource: todo });
    expect([morty.decision, morty.rule]).toEqual(["ALLOWED", "owners"]);
    // roles is read once though two rules test it; the owner after it (paths in sorted order: resource.attr before subject.attr).
    expect(morty.entities).toEqual([
      { entity: "subject", type: "user", id: "morty", attribute: "roles", value: ["editor"], version: 3 },
      { entity: "resource", type: "todo", id: "1", attribute: "owner", value: "morty", version: 7 },
    ]);

    const summer = decide(input("summer"), policy, undefined, undefined, { subject: user("summer", ["editor"]), resource: todo });
    expect([summer.decision, summer.rule]).toEqual(["DENIED", null]);
  });

  test("a missing entity has no attributes and the read says so; an input naming none reads nothing", () => {
    const v = decide(input("jerry"), policy, undefined, undefined, { subject: null, resource: todo });
    expect(v.decision).toBe("DENIED");
    expect(v.entities).toEqual([
      { entity: "subject", type: "user", id: "jerry", attribute: "roles", value: null, version: null },
      { entity: "resource", type: "todo", id: "1", attribute: "owner", value: "morty", version: 7 },
    ]);
    // Facts for another entity than the input names count as not stored.
    const other = decide(input("jerry"), policy, undefined, undefined, { subject: user("rick", ["admin"]) });
    expect([other.decision, other.entities?.[0]?.version]).toEqual(["DENIED", null]);
    const none = decide({ action: "todo.update" }, policy);
    expect([none.decision, none.entities]).toEqual(["DENIED", undefined]);
  });

  test("a rule whose request conditions fail reads nothing", () => {
    const v = decide({ ...input("rick"), action: "todo.read" }, policy, undefined, undefined, { subject: user("rick", ["admin"]) });
    expect(v.entities).toBeUndefined();
  });

  test("the facts rebuilt from the reads decide the same, with the same reads", () => {
    for (const [who, roles] of [["rick", ["admin"]], ["morty", ["editor"]], ["summer", ["editor", "viewer"]]] as const) {
      const facts: EntityFacts = { subject: user(who, [...roles]), resource: todo };
      const first = decide(input(who), policy, undefined, undefined, facts);
      const again = decide(input(who), policy, undefined, undefined, factsFromReads(input(who), first.entities ?? []));
      expect(again).toEqual(first);
    }
    // A tampered value decides otherwise.
    const morty = decide(input("morty"), policy, undefined, undefined, { subject: user("morty", ["editor"]), resource: todo });
    const tampered = morty.entities!.map((r) => (r.attribute === "owner" ? { ...r, value: "someone" } : r));
    expect(decide(input("morty"), policy, undefined, undefined, factsFromReads(input("morty"), tampered)).decision).toBe("DENIED");
  });

  test("the payload names the reads only when there are some, so other payloads keep their hash", () => {
    const base = { kind: "simulation" as const, input: { action: "a" }, policy: { policy_id: "pol_default", version: 1, hash: "0x" + "0".repeat(64) }, decision: "DENIED" as const, reasons: ["x"], rule: null };
    expect(buildPayload({ ...base, entities: [] })).toEqual(buildPayload(base));
    expect("entities" in buildPayload(base)).toBe(false);
    const read = { entity: "subject" as const, type: "user", id: "u", attribute: "roles", value: ["a"], version: 1 };
    expect(buildPayload({ ...base, entities: [read] }).entities).toEqual([read]);
  });

  test("inline entities: found by type and id at version 0, else not stored", () => {
    const entities: InlineEntity[] = [{ type: "user", id: "rick", attributes: { roles: ["admin"] } }];
    expect(inlineFacts(input("rick"), entities)).toEqual({ subject: { type: "user", id: "rick", attributes: { roles: ["admin"] }, version: 0 }, resource: null });
    expect(inlineFacts({ action: "a" }, entities)).toEqual({ subject: undefined, resource: undefined });
  });
});

describe("the entity schema against the store", () => {
  const catalogue = new Map([["user", new Set(["roles", "email"])], ["todo", new Set(["owner"])]]);
  test("known types and attributes pass; an unknown type, or an attribute stored nowhere and not optional, is refused at its path", () => {
    expect(unknownToStore(doc([], SUBJECT_SCHEMA), catalogue)).toEqual({ path: "entities/subject/attributes/level", message: expect.stringContaining('"optional": true') });
    const known = { subject: { types: ["user"], attributes: { roles: { type: "list" }, nick: { type: "string", optional: true } } } };
    expect(unknownToStore(doc([], known), catalogue)).toBeUndefined();
    expect(unknownToStore(doc([], { resource: { types: ["todo", "note"], attributes: {} } }), catalogue)?.path).toBe("entities/resource/types/1");
    expect(unknownToStore(doc([], { resource: { attributes: { owner: { type: "string" } } } }), catalogue)).toBeUndefined();
    expect(unknownToStore(DEFAULT_POLICY, new Map())).toBeUndefined();
  });
});

describe("deciding again from the reads", () => {
  test("for any policy over attributes and any entities, the reads alone decide the same, with the same reads", () => {
    const scalar = fc.constantFrom<string | number | boolean>("a", "b", "u1", 1, 2, true);
    const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }));
    const attrs = fc.dictionary(fc.constantFrom("x", "y", "z"), value, { maxKeys: 3 });
    const entity = (type: string, id: string) => fc.option(fc.record({ type: fc.constant(type), id: fc.constant(id), attributes: attrs, version: fc.nat(9) }), { nil: null });
    const path = fc.constantFrom("subject.attr.x", "subject.attr.y", "resource.attr.x", "resource.attr.z", "subject.id", "context.c", "action");
    const operand = fc.oneof(scalar, path.map((ref) => ({ ref })));
    const listOperand = fc.oneof(fc.array(scalar, { minLength: 1, maxLength: 3 }), path.map((ref) => ({ ref })));
    const op = fc.oneof(
      operand.map((eq) => ({ eq })),
      operand.map((ne) => ({ ne })),
      operand.map((contains) => ({ contains })),
      listOperand.map((any) => ({ any })),
      listOperand.map((all) => ({ all })),
      listOperand.map((v) => ({ in: v })),
      fc.boolean().map((exists) => ({ exists })),
    );
    const rule = fc.record({ id: fc.constantFrom("r1", "r2", "r3"), effect: fc.constantFrom("allow", "deny"), reason: fc.constant("x"), when: fc.record({ where: fc.dictionary(path, op, { minKeys: 1, maxKeys: 3 }) }) });
    const policy = fc.array(rule, { maxLength: 4 }).map((rules) => doc(rules));
    const input = fc.record({ subject: fc.boolean(), resource: fc.boolean(), c: scalar }).map(({ subject, resource, c }): ProtectInput => ({
      action: "a",
      ...(resource ? { resource: "doc/9" } : {}),
      context: { c, ...(subject ? { "subject.type": "user", "subject.id": "u1" } : {}) },
    }));
    fc.assert(
      fc.property(policy, input, entity("user", "u1"), entity("doc", "9"), (p, i, subject, resource) => {
        const first = decide(i, p, undefined, undefined, { subject, resource });
        const again = decide(i, p, undefined, undefined, factsFromReads(i, first.entities ?? []));
        expect(again).toEqual(first);
      }),
      { numRuns: 500 },
    );
  });
});
