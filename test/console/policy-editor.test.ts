// The policy editor's pure helpers: JSON values and syntax errors by line, the server's
// validation messages placed at their line, and the line diff of two versions.
import { describe, expect, test } from "bun:test";
import { JsonSyntaxError, lineOf, lineRange, parseWithLines, readablePath } from "../../src/console/app/json-lines.ts";
import { lineDiff } from "../../src/console/app/line-diff.ts";
import { pretty } from "../../src/console/app/policy-text.ts";
import { locateRefusal, mergeProblems, parseField } from "../../src/console/app/problems.ts";

const DOCUMENT = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "small", effect: "allow", reason: "small_payment", when: { actions: ["payment.*"], amount: { lte: 100 } } },
    { id: "ops", effect: "allow", reason: "ops", when: { context: { "team/name": { eq: "ops" } } } },
  ],
};
const PRETTY = JSON.stringify(DOCUMENT, null, 2);
const lineContaining = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

describe("parseWithLines", () => {
  test("gives the value JSON.parse gives, whatever the formatting", () => {
    for (const text of [PRETTY, JSON.stringify(DOCUMENT), ' [1, -2.5e3, "a\\u0041\\n", true, false, null, {}, []] ', '"x"', "0"]) {
      expect(parseWithLines(text).value).toEqual(JSON.parse(text));
    }
  });

  test("records the line of every member and item by JSON pointer", () => {
    const { lines } = parseWithLines(PRETTY);
    expect(lines.get("")).toBe(1);
    expect(lines.get("/default_reason")).toBe(3);
    expect(lines.get("/rules/0")).toBe(lineContaining(PRETTY, '"id": "small"') - 1);
    expect(lines.get("/rules/0/effect")).toBe(lineContaining(PRETTY, '"effect": "allow"'));
    expect(lines.get("/rules/0/when/amount/lte")).toBe(lineContaining(PRETTY, '"lte": 100'));
    // Keys are escaped as in RFC 6901, as the server writes its paths.
    expect(lines.get("/rules/1/when/context/team~1name/eq")).toBe(lineContaining(PRETTY, '"eq": "ops"'));
    // On one line, every value is on line 1.
    expect(parseWithLines(JSON.stringify(DOCUMENT)).lines.get("/rules/1/reason")).toBe(1);
  });

  test("a syntax error names its line", () => {
    const broken = (text: string) => {
      try {
        parseWithLines(text);
      } catch (error) {
        expect(error).toBeInstanceOf(JsonSyntaxError);
        return { line: (error as JsonSyntaxError).line, message: (error as Error).message };
      }
      throw new Error(`parsed: ${text}`);
    };
    // A missing comma after line 3: found at line 4's key.
    expect(broken(PRETTY.replace('"no_rule_matched",', '"no_rule_matched"'))).toEqual({ line: 4, message: 'Expected \',\' or \'}\' after a member, found "\\""' });
    expect(broken(PRETTY.replace('"effect": "allow"', '"effect": allow')).line).toBe(lineContaining(PRETTY, '"effect": "allow"'));
    expect(broken('{\n  "a": 1,\n}').line).toBe(3);
    expect(broken('{\n  "a": "open\n}').line).toBe(2);
    expect(broken("{ not json").line).toBe(1);
    expect(broken('{"a": 1}\n\n x').message).toMatch(/after the document/);
    expect(broken("").message).toMatch(/end of the text/);
    expect(broken("[".repeat(500)).message).toMatch(/deeply/);
    expect(broken('"\\x"').line).toBe(1);
  });

  test("lineOf falls back to the nearest enclosing value; readablePath writes paths for people", () => {
    const { lines } = parseWithLines(PRETTY);
    expect(lineOf(lines, "/rules/0/when/currency")).toBe(lines.get("/rules/0/when"));
    expect(lineOf(lines, "/nothing/here")).toBe(1);
    expect(readablePath("/rules/0/when/context/team~1name/eq")).toBe("rules[0].when.context.team/name.eq");
    expect(readablePath("")).toBe("");
  });

  test("lineRange selects a whole line", () => {
    expect(lineRange("ab\ncd\nef", 2)).toEqual([3, 5]);
    expect(lineRange("ab\ncd\nef", 3)).toEqual([6, 8]);
    expect(lineRange("ab", 1)).toEqual([0, 2]);
  });
});

describe("locateRefusal", () => {
  const texts = { document: PRETTY, cases: JSON.stringify([{ name: "a", input: { action: "x" }, expect: { decision: "maybe" } }], null, 2) };

  const at = (text: string, needle: string) => ({ from: text.indexOf(needle), to: text.indexOf(needle) + needle.length });

  test("puts the server's message at the place of the value it names", () => {
    expect(locateRefusal("body/document/rules/0/effect: Expected union value", texts)).toEqual({
      field: "document",
      line: lineContaining(PRETTY, '"effect": "allow"'),
      ...at(PRETTY, '"effect": "allow"'),
      pointer: "/rules/0/effect",
      source: "service",
      message: 'rules[0].effect: must be "allow", "deny" or "require_approval"',
    });
    expect(locateRefusal("body/document/default_effect: Expected union value", texts).message).toBe('default_effect: must be "allow" or "deny"');
    expect(locateRefusal("body/document/rules/1/when/context/team~1name/eq: Expected number", texts)).toMatchObject({ field: "document", line: lineContaining(PRETTY, '"eq": "ops"'), ...at(PRETTY, '"eq": "ops"'), message: "rules[1].when.context.team/name.eq: Expected number" });
    // A missing field: the place of the object that lacks it (its name, not all its lines).
    expect(locateRefusal("body/document/rules/1/when/actions: Expected required property", texts)).toMatchObject({ line: lineContaining(PRETTY, '"context"') - 1, from: PRETTY.lastIndexOf('"when"'), to: PRETTY.lastIndexOf('"when"') + 6, pointer: "/rules/1/when/actions" });
    expect(locateRefusal("body/document: Expected required property", texts)).toEqual({ field: "document", line: 1, from: 0, to: 1, pointer: "", source: "service", message: "Expected required property" });
    expect(locateRefusal("body/cases/0/expect/decision: Expected union value", texts)).toMatchObject({ field: "cases", line: lineContaining(texts.cases, '"decision"'), message: "[0].expect.decision: Expected union value" });
  });

  test("a message without a path stays on the field, without a line", () => {
    expect(locateRefusal("The request body is nested more than 32 levels deep.", texts, "cases")).toEqual({ field: "cases", source: "service", message: "The request body is nested more than 32 levels deep." });
    // The text no longer parses: the path is still written, with no line.
    expect(locateRefusal("body/document/rules/0/effect: Expected union value", { ...texts, document: "{" }).line).toBeUndefined();
  });

  test("parseField reports syntax errors of one field at their line and offset", () => {
    expect(parseField("cases", "[\n  1,\n  2,\n]")).toEqual({ problem: { field: "cases", line: 4, from: 12, to: 13, source: "browser", message: 'Not valid JSON: Expected a value, found "]"' } });
    expect(parseField("document", PRETTY)).toEqual({ value: DOCUMENT });
  });

  test("mergeProblems: a path both name is the service's refusal, in the page's words; the rest in the text's order", () => {
    const own = [
      { field: "document" as const, line: 9, from: 90, to: 95, pointer: "/rules/0/effect", source: "browser" as const, message: "mine" },
      { field: "document" as const, line: 3, from: 30, to: 35, pointer: "/default_reason", source: "browser" as const, message: "other" },
      { field: "document" as const, line: 1, from: 1, to: 2, source: "browser" as const, message: "syntax" },
    ];
    const refused = [{ field: "document" as const, line: 9, from: 90, to: 95, pointer: "/rules/0/effect", source: "service" as const, message: "theirs" }];
    expect(mergeProblems(own, refused).map((p) => [p.message, p.source])).toEqual([
      ["syntax", "browser"],
      ["other", "browser"],
      ["mine", "service"],
    ]);
    // A refusal of a path the page found nothing at stays as the service wrote it.
    expect(mergeProblems(own.slice(1), [{ ...refused[0], pointer: "/rules/1" }]).map((p) => p.message)).toEqual(["syntax", "other", "theirs"]);
    expect(mergeProblems(own, []).map((p) => p.message)).toEqual(["syntax", "other", "mine"]);
  });
});

describe("lineDiff", () => {
  const render = (before: string, after: string) => lineDiff(before, after).map((l) => ({ same: " ", add: "+", del: "-" })[l.op] + l.text);

  test("keeps common lines and marks the changed ones, deletions first", () => {
    expect(render("a\nb\nc", "a\nb\nc")).toEqual([" a", " b", " c"]);
    expect(render("a\nb\nc", "a\nx\nc")).toEqual([" a", "-b", "+x", " c"]);
    expect(render("a\nc", "a\nb\nc")).toEqual([" a", "+b", " c"]);
    expect(render("a\nb\nc", "c")).toEqual(["-a", "-b", " c"]);
    expect(render("", "a")).toEqual(["-", "+a"]);
    // A moved line: one side of it is kept, the other added and deleted.
    expect(render("a\nb\nc\nd", "b\nc\na\nd")).toEqual(["-a", " b", " c", "+a", " d"]);
  });

  test("the kept and added lines make the new text, the kept and deleted the old", () => {
    const before = JSON.stringify(DOCUMENT, null, 2);
    const changed = structuredClone(DOCUMENT);
    changed.rules.reverse();
    changed.rules[0].effect = "deny";
    const after = JSON.stringify(changed, null, 2);
    const lines = lineDiff(before, after);
    expect(lines.filter((l) => l.op !== "add").map((l) => l.text).join("\n")).toBe(before);
    expect(lines.filter((l) => l.op !== "del").map((l) => l.text).join("\n")).toBe(after);
    // Minimal: no line both deleted and added twice over what differs.
    expect(lines.filter((l) => l.op === "same").length).toBeGreaterThan(before.split("\n").length / 2);
  });

  test("past the size limit the middle is deleted, then added, still correct", () => {
    const before = Array.from({ length: 2100 }, (_, i) => `a${i}`).join("\n");
    const after = Array.from({ length: 2100 }, (_, i) => `b${i}`).join("\n");
    const lines = lineDiff(`x\n${before}\ny`, `x\n${after}\ny`);
    expect(lines[0]).toEqual({ op: "same", text: "x" });
    expect(lines.filter((l) => l.op === "del").length).toBe(2100);
    expect(lines.filter((l) => l.op === "add").length).toBe(2100);
    expect(lines.at(-1)).toEqual({ op: "same", text: "y" });
  });
});

describe("pretty", () => {
  test("one key order whatever order the document came in, so a diff shows only real changes", () => {
    // As PostgreSQL's jsonb hands a document back: shorter keys first.
    const stored = { rules: [{ id: "small", when: { amount: { lte: 100 }, actions: ["payment.*"] }, effect: "allow", reason: "small_payment" }], default_effect: "deny", default_reason: "no_rule_matched" };
    const published = { default_effect: "deny", default_reason: "no_rule_matched", rules: [{ id: "small", effect: "allow", reason: "small_payment", when: { actions: ["payment.*"], amount: { lte: 100 } } }] };
    expect(pretty(stored)).toBe(pretty(published));
    expect(pretty(stored)).toBe(JSON.stringify(published, null, 2));
    expect(JSON.parse(pretty(stored))).toEqual(stored);
    // Test cases read as written: name, input, expect.
    expect(Object.keys(JSON.parse(pretty([{ expect: { decision: "DENIED" }, input: { action: "x" }, name: "n" }]))[0])).toEqual(["name", "input", "expect"]);
  });
});
