// Where things are in a JSON text, by line: the policy editor is a plain textarea, so it says
// "line 12: ..." for a syntax error or a value the server refused, in the text as the person
// typed it (however it is formatted), and moves the caret there.

/** A JSON syntax error with the line (1-based) it was found on. */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

export interface LocatedJson {
  value: unknown;
  /** The line of every value by its JSON pointer ("" is the whole document); a member's is its key's line. */
  lines: Map<string, number>;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

// JSON pointer escaping (RFC 6901), as the server's validation messages write paths.
const escapeKey = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

/** Parses `text` as JSON (what JSON.parse accepts) and records the line of each value; throws JsonSyntaxError. */
export function parseWithLines(text: string): LocatedJson {
  const lines = new Map<string, number>();
  let at = 0;
  let line = 1;
  const fail = (what: string): never => {
    const found = at >= text.length ? "the end of the text" : JSON.stringify(text[at]);
    throw new JsonSyntaxError(`${what}, found ${found}`, line);
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
    const c = text[at];
    if (c === "{") {
      at++;
      const object: Record<string, unknown> = {};
      skip();
      if (text[at] === "}") return at++, object;
      for (;;) {
        skip();
        const keyLine = line;
        const key = string();
        const child = `${pointer}/${escapeKey(key)}`;
        lines.set(child, keyLine);
        skip();
        if (text[at] !== ":") fail(`Expected ':' after the name "${key}"`);
        at++;
        object[key] = value(child, depth + 1);
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
  return { value: result, lines };
}

/** The line of `pointer`, or of its nearest ancestor present in the text (a missing field: its object's line). */
export function lineOf(lines: Map<string, number>, pointer: string): number | undefined {
  for (let p = pointer; ; p = p.slice(0, p.lastIndexOf("/"))) {
    const found = lines.get(p);
    if (found !== undefined || p === "") return found;
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
