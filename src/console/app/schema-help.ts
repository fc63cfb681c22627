// What the policy editor learns from the schemas the service validates with: the policy document
// (src/decide/policy.ts) and the test cases (src/policies/cases.ts). As you type, a text's
// problems, each at its JSON path (TypeBox's own check, so the rules are the service's; then the
// checks the schema cannot say, documentProblem()); at the cursor, the names and values the
// schema allows there. Loaded with the editor only (./code-editor.ts), not by every page.
import type { TSchema } from "@sinclair/typebox";
import { Errors, ValueErrorType, type ValueError } from "@sinclair/typebox/errors";
import { documentProblem, PolicyDocument, WHERE_PATH } from "../../decide/policy.ts";
import { TestCases } from "../../policies/cases.ts";
import { contextAt } from "./json-context.ts";
import { JsonSyntaxError, parseWithLines, placeOf, readablePath } from "./json-lines.ts";
import { parseField, type EditorField, type Problem } from "./problems.ts";

export const SCHEMAS: Record<EditorField, TSchema> = { document: PolicyDocument, cases: TestCases };

// Enough to work through; a text far off its shape would otherwise list hundreds.
const MAX_PROBLEMS = 20;

/** The field's problems in `text`: its JSON syntax, else every value the schema (then documentProblem) refuses, each at its place. */
export function checkText(field: EditorField, text: string): Problem[] {
  let located;
  try {
    located = parseWithLines(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    const parsed = parseField(field, text);
    return "problem" in parsed ? [parsed.problem] : [];
  }
  return schemaProblems(field, located.value).map((p) => ({ field, ...placeOf(located, p.pointer), pointer: p.pointer, source: "browser" as const, message: p.message }));
}

/** A problem of a parsed value at its JSON pointer, written for people. */
export interface SchemaProblem {
  pointer: string;
  message: string;
}

/** The value's problems under the field's schema, one per JSON path, in the text's order. */
export function schemaProblems(field: EditorField, value: unknown): SchemaProblem[] {
  const found = new Map<string, string>();
  for (const error of Errors(SCHEMAS[field], value)) {
    // A missing member is reported twice (required, then its type): the first says it.
    if (!found.has(error.path)) found.set(error.path, explain(error));
    if (found.size >= MAX_PROBLEMS) break;
  }
  if (found.size === 0 && field === "document") {
    const problem = documentProblem(value as PolicyDocument);
    if (problem) found.set(`/${problem.path}`, problem.message);
  }
  return [...found].map(([pointer, message]) => ({ pointer, message: withPath(pointer, message) }));
}

const withPath = (pointer: string, message: string) => {
  const where = readablePath(pointer);
  return where ? `${where}: ${message}` : message;
};

const quoted = (values: unknown[]) => values.map((v) => JSON.stringify(v));
const either = (words: string[]) => (words.length <= 1 ? words.join("") : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`);

/** TypeBox's message, or a sentence that names what is allowed where people most often trip. */
function explain(error: ValueError): string {
  const schema = error.schema as TSchema;
  const name = error.path.slice(error.path.lastIndexOf("/") + 1).replace(/~1/g, "/").replace(/~0/g, "~");
  switch (error.type) {
    case ValueErrorType.Union: {
      const values = literals(schema);
      if (values) return `must be ${either(quoted(values))}`;
      break;
    }
    case ValueErrorType.ObjectAdditionalProperties: {
      const names = Object.keys(schema.properties ?? {});
      if (names.length === 0) return `"${name}" is not a name allowed here`;
      return `"${name}" is not allowed here: ${kindOf(schema) ?? "a member"} is one of ${names.join(", ")}`;
    }
    case ValueErrorType.ObjectRequiredProperty:
      return `"${name}" is missing`;
    case ValueErrorType.ObjectMinProperties: {
      const optional = Object.keys(schema.properties ?? {}).filter((k) => !(schema.required ?? []).includes(k));
      if (optional.length > 0) return `needs at least one of ${optional.join(", ")}`;
      break;
    }
  }
  return error.message;
}

/** The values a union of literals allows (effect, window, ...), or undefined for any other schema. */
function literals(schema: TSchema): unknown[] | undefined {
  const options = schema.anyOf as TSchema[] | undefined;
  if (!options || !options.every((o) => "const" in o)) return undefined;
  return options.map((o) => o.const);
}

// ---- what may come at the cursor ------------------------------------------------------------

/** The schemas a path can lead to (a union: each of its options). */
export function schemasAt(root: TSchema, path: (string | number)[]): TSchema[] {
  let at = options(root);
  for (const segment of path) at = at.flatMap((s) => options(child(s, segment)));
  return at;
}

function options(schema: TSchema | undefined): TSchema[] {
  if (!schema) return [];
  return schema.anyOf ? (schema.anyOf as TSchema[]).flatMap(options) : [schema];
}

function child(schema: TSchema, segment: string | number): TSchema | undefined {
  if (schema.type === "array") return typeof segment === "number" ? (schema.items as TSchema) : undefined;
  if (schema.type !== "object" || typeof segment !== "string") return undefined;
  if (schema.properties?.[segment]) return schema.properties[segment] as TSchema;
  // A record (context, a case's usage): any name its pattern allows.
  const patterns = Object.entries((schema.patternProperties ?? {}) as Record<string, TSchema>);
  return patterns.find(([pattern]) => new RegExp(pattern).test(segment))?.[1] ?? patterns[0]?.[1];
}

/** What the members of an object schema are, for people: the policy language's own words. */
function kindOf(schema: TSchema): string | undefined {
  const names = Object.keys(schema.properties ?? {});
  if (names.includes("eq") || names.includes("gt")) return names.includes("sum") ? "a usage field" : "an operator";
  if (names.includes("sum")) return "a usage field";
  if (names.includes("actions")) return "a condition";
  if (names.includes("quorum")) return "an approval term";
  if (names.includes("when")) return "a rule field";
  return undefined;
}

// Short help shown beside a name, in the words of docs/policy.md.
const HINTS: Record<string, Record<string, string>> = {
  "a condition": {
    actions: "action patterns; a trailing * matches a prefix",
    resources: "resource patterns; a trailing * matches a prefix",
    keys: "the calling API key is one of these",
    amount: "the input's amount satisfies the operators",
    currency: "the input's currency satisfies the operators",
    context: "named context values, each with its operators",
    usage: "a budget or rate window: count or sum of amount per key or tenant",
    where: 'values of the request or stored attributes (subject.attr.NAME, resource.attr.NAME), each with its operators; an operand may be {"ref": PATH}',
  },
  "an operator": {
    eq: "equals",
    ne: "differs (a missing value fails)",
    in: "one of a list",
    not_in: "none of a list (a missing value fails)",
    gt: "greater than",
    gte: "greater than or equal",
    lt: "less than",
    lte: "less than or equal",
    prefix: "starts with",
    exists: "present (true) or absent (false)",
    contains: "a list holding this value",
    any: "a list holding at least one of these",
    all: "a list holding every one of these",
  },
  "a usage field": {
    sum: '"count" of calls or "amount" summed',
    per: '"key": each calling key; "tenant": all together',
    window: "the UTC window: minute, hour, day or month",
    gt: "holds above this, counting this request",
    gte: "holds at or above this, counting this request",
    lt: "holds below this, counting this request",
    lte: "holds at or below this, counting this request",
  },
  "an approval term": {
    quorum: "distinct people who must approve (1 to 5, default 1; one person is one vote, whatever their memberships)",
    roles: "roles that may vote (default owner, admin, approver)",
    expires_in: "seconds the request waits (60 to 604800, default 3600)",
    execute_within: "seconds to execute once approved (60 to 86400, default 900)",
  },
  "a rule field": {
    id: "a name for the rule, named by receipts",
    effect: '"allow", "deny" or "require_approval"',
    reason: "the reason receipts give when this rule decides",
    when: "the conditions: all must hold",
    approval: "terms of a require_approval rule",
  },
};

/** One thing that may be typed at the cursor: what to show, and the text that replaces what was typed. */
export interface Suggestion {
  label: string;
  /** "property" for a name, "constant" for a value. */
  type: "property" | "constant";
  detail?: string;
  info?: string;
  insert: string;
  /** Where the cursor goes in `insert` (inside the brackets or quotes of a new value). */
  cursor: number;
  /** The inserted value is one the schema lists choices for: offer them at once. */
  again: boolean;
}

export interface Suggestions {
  /** What the typed text is matched from (after an opening quote) and the range replaced. */
  match: number;
  from: number;
  to: number;
  options: Suggestion[];
}

/** What the field's schema allows at `pos` of `text`, or undefined where it has nothing to offer. */
export function suggestionsAt(field: EditorField, text: string, pos: number): Suggestions | undefined {
  const context = contextAt(text, pos);
  if (!context) return undefined;
  const schemas = schemasAt(SCHEMAS[field], context.path);
  const options = context.kind === "key" ? names(schemas, context.present, context.named) : values(schemas);
  if (options.length === 0) return undefined;
  return { match: context.quoted ? context.from + 1 : context.from, from: context.from, to: context.to, options };
}

// The paths a `where` condition may name (docs/policy.md, "Entities and attributes"); NAME is typed after the dot.
const WHERE_NAMES: Record<string, string> = {
  action: "the input's action",
  resource: "the input's resource",
  amount: "the input's amount",
  currency: "the input's currency",
  "context.": "a context value: context.NAME",
  "principal.key_id": "the calling API key",
  "subject.id": "the subject's id (context subject.id)",
  "subject.type": "the subject's type (context subject.type)",
  "resource.id": "the resource's id",
  "resource.type": "the resource's type",
  "subject.attr.": "a stored attribute of the subject: subject.attr.NAME, declared in entities.subject",
  "resource.attr.": "a stored attribute of the resource: resource.attr.NAME, declared in entities.resource",
};

function names(schemas: TSchema[], present: string[], named: boolean): Suggestion[] {
  const seen = new Set(present);
  const out: Suggestion[] = [];
  for (const schema of schemas) {
    if (schema.type !== "object") continue;
    if (Object.hasOwn(schema.patternProperties ?? {}, WHERE_PATH)) {
      for (const [name, info] of Object.entries(WHERE_NAMES)) {
        if (seen.has(name)) continue;
        // A path ending in a dot wants its NAME typed next: the name only, the cursor before its closing quote.
        const open = name.endsWith(".");
        const head = open || named ? JSON.stringify(name) : `${JSON.stringify(name)}: {}`;
        out.push({ label: name, type: "property", detail: "where path", info, insert: head, cursor: open ? head.length - 1 : named ? head.length : head.length - 1, again: !open && !named });
      }
      continue;
    }
    const kind = kindOf(schema);
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, TSchema>)) {
      if (seen.has(name)) continue;
      seen.add(name);
      const [value, cursor] = named ? ["", 0] : template(property);
      const head = `${JSON.stringify(name)}${named ? "" : ": "}`;
      const required = (schema.required ?? []).includes(name);
      out.push({
        label: name,
        type: "property",
        detail: [kind?.replace(/^an? /, ""), required ? "required" : undefined].filter(Boolean).join(", ") || undefined,
        info: (kind && HINTS[kind]?.[name]) ?? (property.description as string | undefined),
        insert: head + value,
        cursor: head.length + cursor,
        again: !named && (literals(property) !== undefined || property.type === "object" || property.type === "boolean"),
      });
    }
  }
  return out;
}

/** A new member's value as typed for it: the brackets or quotes its schema wants, the cursor inside. */
function template(schema: TSchema): [string, number] {
  const first = options(schema)[0] ?? schema;
  if (first.type === "object") return ["{}", 1];
  if (first.type === "array") return (first.items as TSchema)?.type === "string" || literals(first.items as TSchema) ? ['[""]', 2] : ["[]", 1];
  if (first.type === "string") return ['""', 1];
  return ["", 0];
}

function values(schemas: TSchema[]): Suggestion[] {
  const out = new Map<string, Suggestion>();
  const add = (value: unknown) => {
    const insert = JSON.stringify(value);
    if (!out.has(insert)) out.set(insert, { label: typeof value === "string" ? value : insert, type: "constant", insert, cursor: insert.length, again: false });
  };
  for (const schema of schemas) {
    if ("const" in schema) add(schema.const);
    else if (schema.type === "boolean") [true, false].forEach((b) => add(b));
  }
  return [...out.values()];
}
