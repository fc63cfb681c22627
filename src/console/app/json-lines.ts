// Where things are in a JSON text, by line and offset: the policy editor says "line 12: ..." for
// a syntax error, a value the schema or the server refused, in the text as the person typed it
// (however it is formatted), marks it there and moves the caret to it.

/** A JSON syntax error with the line (1-based) it was found on. */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
    /** The offset in the text where parsing stopped. */
    readonly at: number,
  ) {
    super(message);
  }
}

export interface LocatedJson {
  value: unknown;
  /** The line of every value by its JSON pointer ("" is the whole document); a member's is its key's line. */
  lines: Map<string, number>;
  /**
   * What to mark for each pointer, as [from, to) offsets: a member's name through its value when
   * that is a scalar, else its name alone; an item's value, or a container's opening bracket.
   */
  spans: Map<string, [number, number]>;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

// JSON pointer escaping (RFC 6901), as the server's validation messages write paths.
const escapeKey = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

/** Parses `text` as JSON (what JSON.parse accepts) and records the line of each value; throws JsonSyntaxError. */
export function parseWithLines(text: string): LocatedJson {
  const lines = new Map<string, number>();
  const spans = new Map<string, [number, number]>();
  let at = 0;
  let line = 1;
  const fail = (what: string): never => {
    const found = at >= text.length ? "the end of the text" : JSON.stringify(text[at]);
    throw new JsonSyntaxError(`${what}, found ${found}`, line, at);
  };
  // Newlines can only sit between tokens (a JSON string holds none), so lines are counted here.
  const skip = () => {
    for (; at < text.length; at++) {
      const c = text[at];
      if (c === "\n") line++;
      else if (c !== " " && c !== "\t" && c !== "\r") break;
    }
  };
  const token = (pattern: RegExp) => {
    pattern.lastIndex = at;
    const match = pattern.exec(text);
    if (!match) return undefined;
    at += match[0].length;
    return match[0];
  };
  const string = () => {
    const raw = token(STRING);
    if (raw === undefined) fail(text[at] === '"' ? "A string that is not closed on its line or has a bad escape" : "Expected a string in double quotes");
    return JSON.parse(raw!) as string;
  };
  const value = (pointer: string, depth: number): unknown => {
    if (depth > 200) fail("Nested too deeply");
    skip();
    if (!lines.has(pointer)) lines.set(pointer, line);
    const start = at;
    const parsed = read(pointer, depth);
    spans.set(pointer, isContainer(parsed) ? [start, start + 1] : [start, at]);
    return parsed;
  };
  const read = (pointer: string, depth: number): unknown => {
    const c = text[at];
    if (c === "{") {
      at++;
      const object: Record<string, unknown> = {};
      skip();
      if (text[at] === "}") return at++, object;
      for (;;) {
        skip();
        const keyLine = line;
        const keyFrom = at;
        const key = string();
        const keyTo = at;
        const child = `${pointer}/${escapeKey(key)}`;
        lines.set(child, keyLine);
        skip();
        if (text[at] !== ":") fail(`Expected ':' after the name "${key}"`);
        at++;
        object[key] = value(child, depth + 1);
        spans.set(child, [keyFrom, isContainer(object[key]) ? keyTo : at]);
        skip();
        if (text[at] === ",") at++;
        else if (text[at] === "}") return at++, object;
        else fail("Expected ',' or '}' after a member");
      }
    }
    if (c === "[") {
      at++;
      const array: unknown[] = [];
      skip();
      if (text[at] === "]") return at++, array;
      for (;;) {
        array.push(value(`${pointer}/${array.length}`, depth + 1));
        skip();
        if (text[at] === ",") at++;
        else if (text[at] === "]") return at++, array;
        else fail("Expected ',' or ']' after an item");
      }
    }
    if (c === '"') return string();
    for (const [word, literal] of [["true", true], ["false", false], ["null", null]] as const) {
      if (text.startsWith(word, at)) return (at += word.length), literal;
    }
    const number = token(NUMBER);
    if (number === undefined) fail("Expected a value");
    return Number(number);
  };
  const result = value("", 0);
  skip();
  if (at < text.length) fail("Unexpected text after the document");
  return { value: result, lines, spans };
}

const isContainer = (value: unknown) => value !== null && typeof value === "object";

/** The line of `pointer`, or of its nearest ancestor present in the text (a missing field: its object's line). */
export function lineOf(lines: Map<string, number>, pointer: string): number | undefined {
  for (let p = pointer; ; p = p.slice(0, p.lastIndexOf("/"))) {
    const found = lines.get(p);
    if (found !== undefined || p === "") return found;
  }
}

/** Where to mark `pointer` in the text: its own span, or its nearest enclosing value's (a missing member). */
export function placeOf(located: LocatedJson, pointer: string): { line: number; from: number; to: number } | undefined {
  for (let p = pointer; ; p = p.slice(0, p.lastIndexOf("/"))) {
    const span = located.spans.get(p);
    const line = located.lines.get(p);
    if (span && line !== undefined) return { line, from: span[0], to: span[1] };
    if (p === "") return undefined;
  }
}

/** "/rules/0/when/a~1b" -> "rules[0].when.a/b": a path for people. */
export function readablePath(pointer: string): string {
  return pointer
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join("");
}

/** The start and end offsets of line `line` (1-based) of `text`, to select it in a textarea. */
export function lineRange(text: string, line: number): [number, number] {
  let start = 0;
  for (let n = 1; n < line; n++) {
    const next = text.indexOf("\n", start);
    if (next < 0) break;
    start = next + 1;
  }
  const end = text.indexOf("\n", start);
  return [start, end < 0 ? text.length : end];
}
