// The policy editor's checks and completion, from the schemas the service validates with: where
// the cursor is in a half-typed JSON text, what the schema offers there, and each problem of a
// text at its place, worded as the service would refuse it.
import { describe, expect, test } from "bun:test";
import { contextAt } from "../../src/console/app/json-context.ts";
import { parseWithLines } from "../../src/console/app/json-lines.ts";
import { checkText, schemaProblems, suggestionsAt } from "../../src/console/app/schema-help.ts";
import { bearer } from "../helpers/customer.ts";
import { call, signup } from "../helpers/service.ts";

/** The text with the cursor where `|` is. */
const at = (marked: string) => ({ text: marked.replace("|", ""), pos: marked.indexOf("|") });
const ctx = (marked: string): [string, number] => {
  const { text, pos } = at(marked);
  return [text, pos];
};
const labels = (marked: string, field: "document" | "cases" = "document") => {
  const { text, pos } = at(marked);
  return suggestionsAt(field, text, pos)?.options.map((o) => o.label);
};

describe("contextAt", () => {
  test("a member's name: the object's path, what is typed, the names already there", () => {
    const { text, pos } = at('{"rules": [{"id": "a", "when": {"actions": ["x"], "am|"}}]}');
    expect(contextAt(text, pos)).toEqual({ kind: "key", path: ["rules", 0, "when"], from: text.indexOf('"am'), to: text.indexOf('"am') + 4, typed: "am", quoted: true, named: false, present: ["actions"] });
  });

  test("a value: its path, inside quotes or as a bare word, or at the cursor", () => {
    expect(contextAt(...ctx('{"rules": [{}, {"effect": "al|'))).toMatchObject({ kind: "value", path: ["rules", 1, "effect"], typed: "al", quoted: true });
    expect(contextAt(...ctx('{"a": {"exists": tr|}}'))).toMatchObject({ kind: "value", path: ["a", "exists"], typed: "tr", quoted: false, to: 19 });
    expect(contextAt(...ctx('{"roles": ["owner", |'))).toMatchObject({ kind: "value", path: ["roles", 1], typed: "" });
    // Renaming a member: its value stays.
    expect(contextAt(...ctx('{"am|": {"gt": 1}}'))).toMatchObject({ kind: "key", named: true });
  });

  test("nothing where nothing may be typed: after a value, after the document", () => {
    expect(contextAt(...ctx('{"a": 1 |}'))).toBeUndefined();
    expect(contextAt(...ctx('{"a": "x" |'))).toBeUndefined();
    expect(contextAt(...ctx("{} |"))).toBeUndefined();
    // Escapes and brackets inside strings do not confuse it.
    expect(contextAt(...ctx('{"a": "x\\"}]", "|'))).toMatchObject({ kind: "key", path: [], present: ["a"] });
  });
});

describe("suggestionsAt", () => {
  test("condition names in a when, without the ones already there", () => {
    expect(labels('{"rules": [{"when": {"actions": ["x"], "|"}}]}')).toEqual(["resources", "keys", "amount", "currency", "context", "usage", "where"]);
  });

  test("where: its paths, and the operators of a path with list membership", () => {
    expect(labels('{"rules": [{"when": {"where": {"|"}}}]}')).toEqual([
      "action", "resource", "amount", "currency", "context.", "principal.key_id", "subject.id", "subject.type", "resource.id", "resource.type", "subject.attr.", "resource.attr.",
    ]);
    expect(labels('{"rules": [{"when": {"where": {"subject.attr.roles": {"|"}}}}]}')).toEqual(["eq", "ne", "in", "not_in", "gt", "gte", "lt", "lte", "prefix", "contains", "any", "all", "exists"]);
    const attr = suggestionsAt("document", '{"rules": [{"when": {"where": {"s"}}}]}', 33)!.options.find((o) => o.label === "subject.attr.")!;
    expect(attr).toMatchObject({ insert: '"subject.attr."', cursor: '"subject.attr.'.length });
  });

  test("operators, by the field they test", () => {
    expect(labels('{"rules": [{"when": {"amount": {"|"}}}]}')).toEqual(["eq", "ne", "in", "not_in", "exists", "gt", "gte", "lt", "lte"]);
    expect(labels('{"rules": [{"when": {"currency": {"|"}}}]}')).toEqual(["eq", "ne", "in", "not_in", "exists", "prefix"]);
    expect(labels('{"rules": [{"when": {"context": {"team": {"|"}}}}]}')).toEqual(["eq", "ne", "in", "not_in", "exists", "gt", "gte", "lt", "lte", "prefix"]);
  });

  test("effects, usage fields and windows, approval terms and roles, a case's decision", () => {
    expect(labels('{"rules": [{"effect": "|"}]}')).toEqual(["allow", "deny", "require_approval"]);
    expect(labels('{"default_effect": "|"}')).toEqual(["allow", "deny"]);
    expect(labels('{"rules": [{"when": {"usage": {"|"}}}]}')).toEqual(["sum", "per", "window", "gt", "gte", "lt", "lte"]);
    expect(labels('{"rules": [{"when": {"usage": {"window": "|"}}}]}')).toEqual(["minute", "hour", "day", "month"]);
    expect(labels('{"rules": [{"when": {"usage": {"sum": |}}}]}')).toEqual(["amount", "count"]);
    expect(labels('{"rules": [{"approval": {"|"}}]}')).toEqual(["quorum", "roles", "expires_in", "execute_within"]);
    expect(labels('{"rules": [{"approval": {"roles": ["|"]}}]}')).toEqual(["owner", "admin", "developer", "approver", "viewer"]);
    expect(labels('[{"expect": {"decision": "|"}}]', "cases")).toEqual(["ALLOWED", "DENIED"]);
    expect(labels('[{"input": {"|"}}]', "cases")).toEqual(["action", "resource", "amount", "currency", "context"]);
    expect(labels('{"rules": [{"when": {"amount": {"exists": |}}}]}')).toEqual(["true", "false"]);
  });

  test("what accepting inserts: the name quoted with the brackets its value wants, the cursor inside", () => {
    const { text, pos } = at('{"rules": [{"when": {"am|"}}]}');
    const found = suggestionsAt("document", text, pos)!;
    // Matched from after the quote; the quote typed and the one closeBrackets added are replaced.
    expect(found).toMatchObject({ match: text.indexOf('"am') + 1, from: text.indexOf('"am'), to: text.indexOf('"am') + 4 });
    const amount = found.options.find((o) => o.label === "amount")!;
    expect(amount).toMatchObject({ insert: '"amount": {}', cursor: '"amount": {'.length, again: true, detail: "condition" });
    expect(amount.info).toContain("amount");
    expect(found.options.find((o) => o.label === "actions")).toMatchObject({ insert: '"actions": [""]', cursor: '"actions": ["'.length });
    const effect = suggestionsAt("document", '{"rules": [{"e"}]}', 14)!.options.find((o) => o.label === "effect")!;
    expect(effect).toMatchObject({ insert: '"effect": ""', cursor: '"effect": "'.length, again: true, detail: "rule field, required" });
    // Renaming a name keeps its value: only the name goes in.
    expect(suggestionsAt("document", '{"rules": [{"when": {"am": {"gt": 1}}}]}', 24)!.options.find((o) => o.label === "amount")).toMatchObject({ insert: '"amount"' });
  });

  test("nothing to offer in free text: a reason, a record's names", () => {
    expect(labels('{"rules": [{"reason": "|"}]}')).toBeUndefined();
    expect(labels('{"rules": [{"when": {"context": {"|"}}}]}')).toBeUndefined();
  });
});

describe("schemaProblems and checkText", () => {
  const doc = (rule: object) => JSON.stringify({ default_effect: "deny", default_reason: "no_rule_matched", rules: [{ id: "r", effect: "deny", reason: "r", when: {}, ...rule }] }, null, 2);

  test("each refused value at its place, in words that name what is allowed", () => {
    const text = doc({ effect: "maybe", when: { amont: { gt: 5 }, currency: {} } });
    const problems = checkText("document", text);
    const line = (needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;
    expect(problems.map((p) => [p.line, p.message])).toEqual([
      [line('"maybe"'), 'rules[0].effect: must be "allow", "deny" or "require_approval"'],
      [line('"amont"'), 'rules[0].when.amont: "amont" is not allowed here: a condition is one of actions, resources, keys, amount, currency, context, usage, where'],
      [line('"currency"'), "rules[0].when.currency: needs at least one of eq, ne, in, not_in, exists, prefix"],
    ]);
    expect(problems[1]).toMatchObject({ field: "document", pointer: "/rules/0/when/amont", source: "browser", from: text.indexOf('"amont"'), to: text.indexOf('"amont"') + 7 });
  });

  test("a missing member once, at the object that lacks it; bounds; what the schema cannot say", () => {
    expect(schemaProblems("document", { default_effect: "deny", rules: [] })).toEqual([{ pointer: "/default_reason", message: 'default_reason: "default_reason" is missing' }]);
    expect(checkText("document", doc({ approval: { quorum: 9 }, effect: "require_approval" })).map((p) => p.message)).toEqual(["rules[0].approval.quorum: Expected integer to be less or equal to 5"]);
    // Consistency beyond the schema (src/decide/policy.ts documentProblem), once the schema holds.
    expect(checkText("document", doc({ when: { usage: { sum: "amount", per: "key", window: "day", gt: 5 } } })).map((p) => p.message)).toEqual([
      'rules[0].when.usage.sum: a sum over amount needs a currency condition with eq in the same when ("currency": {"eq": "EUR"})',
    ]);
    expect(checkText("document", doc({ approval: { quorum: 2 } })).map((p) => p.pointer)).toEqual(["/rules/0/approval"]);
    expect(checkText("document", doc({}))).toEqual([]);
    expect(checkText("cases", '[{"name": "a", "input": {"action": "x"}, "expect": {"decision": "maybe"}}]').map((p) => p.message)).toEqual(['[0].expect.decision: must be "ALLOWED" or "DENIED"']);
  });

  test("a syntax error is the one problem while the text is not JSON", () => {
    expect(checkText("document", '{\n  "rules": [\n}')).toEqual([{ field: "document", line: 3, from: 15, to: 16, source: "browser", message: 'Not valid JSON: Expected a value, found "}"' }]);
  });

  test("the page refuses what the service refuses, at the same path", async () => {
    const { token } = await signup();
    const drafts = [
      { default_effect: "deny", default_reason: "x", rules: [{ id: "r", effect: "maybe", reason: "r", when: {} }] },
      { default_effect: "deny", default_reason: "x", rules: [{ id: "r", effect: "deny", reason: "r", when: { amont: { gt: 1 } } }] },
      { default_effect: "deny", default_reason: "x", rules: [{ id: "r", effect: "deny", reason: "r", when: { usage: { sum: "count", per: "key", window: "week", gt: 1 } } }] },
      { default_effect: "deny", default_reason: "x", rules: [{ id: "r", effect: "deny", reason: "r", when: { usage: { sum: "amount", per: "key", window: "day", gt: 1 } } }] },
    ];
    for (const document of drafts) {
      const reply = await call("POST", "/customer/policy/test", { json: { document, cases: [] }, headers: bearer(token) });
      expect(reply.status).toBe(400);
      const served = /^body\/document(\/\S*): /.exec(reply.body.message)![1];
      expect(schemaProblems("document", document)[0].pointer).toBe(served);
    }
  });
});

describe("parseWithLines spans", () => {
  test("a member's name through a scalar value; a container's name only; an item's value", () => {
    const text = '{"a": 1, "b": {"c": [true, {"d": null}]}}';
    const { spans } = parseWithLines(text);
    const slice = (p: string) => text.slice(...spans.get(p)!);
    expect(slice("/a")).toBe('"a": 1');
    expect(slice("/b")).toBe('"b"');
    expect(slice("/b/c/0")).toBe("true");
    expect(slice("/b/c/1")).toBe("{");
    expect(slice("/b/c/1/d")).toBe('"d": null');
    expect(slice("")).toBe("{");
  });
});
