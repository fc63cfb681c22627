// Where the cursor is in a JSON text that is being typed, so the policy editor can offer what may
// come there: a member's name (and which object it is in) or a value (and its path). It reads the
// text before the cursor only and forgives what is not finished yet: an open string, a missing
// comma, an unclosed bracket.

export interface JsonContext {
  /** A member's name is being typed, or a value. */
  kind: "key" | "value";
  /** The path of the object whose member is typed (key), or of the value typed (value). */
  path: (string | number)[];
  /** Where what is typed starts: its opening quote, or its first letter, or the cursor. */
  from: number;
  /** Where a replacement ends: past a closing quote or the rest of a word right after the cursor. */
  to: number;
  /** What is typed so far, without the opening quote. */
  typed: string;
  /** Inside a string (the replacement then brings its own quotes). */
  quoted: boolean;
  /** A ':' already follows the name (renaming a member keeps its value). */
  named: boolean;
  /** The names already in the object (key), before the cursor. */
  present: string[];
}

type Frame = { kind: "object"; key: string | null; expect: "key" | "colon" | "value" | "comma"; keys: string[] } | { kind: "array"; index: number; expect: "value" | "comma" };

const WORD = /[A-Za-z0-9_.+-]/;

/** The context at `pos`, or undefined where nothing can be typed (after a value, before a comma). */
export function contextAt(text: string, pos: number): JsonContext | undefined {
  const stack: Frame[] = [];
  const top = () => stack[stack.length - 1];
  let done = false;
  // A value ended: its container now waits for a comma; after the root, nothing more comes.
  const ended = () => {
    const frame = top();
    if (frame) frame.expect = "comma";
    else done = true;
  };
  let i = 0;
  while (i < pos) {
    const c = text[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
    } else if (c === '"') {
      // A string ends at its closing quote, or (not finished) at the end of its line.
      let j = i + 1;
      while (j < text.length && text[j] !== '"' && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
      const closed = text[j] === '"';
      if (pos <= j) return inside(text, stack, i, pos, closed ? j + 1 : pos, closed);
      const raw = text.slice(i + 1, j);
      const frame = top();
      if (frame?.kind === "object" && frame.expect === "key") {
        frame.key = unescape(raw);
        frame.keys.push(frame.key);
        frame.expect = "colon";
      } else ended();
      i = closed ? j + 1 : j;
    } else if (c === "{") {
      stack.push({ kind: "object", key: null, expect: "key", keys: [] });
      i++;
    } else if (c === "[") {
      stack.push({ kind: "array", index: 0, expect: "value" });
      i++;
    } else if (c === "}" || c === "]") {
      stack.pop();
      ended();
      i++;
    } else if (c === ":") {
      const frame = top();
      if (frame?.kind === "object") frame.expect = "value";
      i++;
    } else if (c === ",") {
      const frame = top();
      if (frame?.kind === "object") {
        frame.key = null;
        frame.expect = "key";
      } else if (frame) {
        frame.index++;
        frame.expect = "value";
      }
      i++;
    } else if (WORD.test(c)) {
      let j = i;
      while (j < text.length && WORD.test(text[j])) j++;
      if (pos <= j) return bare(text, stack, i, pos, j);
      ended();
      i = j;
    } else {
      i++;
    }
  }
  const frame = top();
  if (done && !frame) return undefined;
  if (frame?.kind === "object" && frame.expect === "key") return { kind: "key", path: pathOf(stack, false), from: pos, to: pos, typed: "", quoted: false, named: false, present: frame.keys };
  if (!frame || frame.expect === "value") return { kind: "value", path: pathOf(stack, true), from: pos, to: pos, typed: "", quoted: false, named: false, present: [] };
  return undefined;
}

/** The cursor is inside the string that opens at `from`. */
function inside(text: string, stack: Frame[], from: number, pos: number, to: number, closed: boolean): JsonContext | undefined {
  const frame = stack[stack.length - 1];
  const typed = text.slice(from + 1, pos);
  if (frame?.kind === "object" && frame.expect === "key") {
    return { kind: "key", path: pathOf(stack, false), from, to, typed, quoted: true, named: closed && /^\s*:/.test(text.slice(to)), present: frame.keys };
  }
  if (!frame || frame.expect === "value") return { kind: "value", path: pathOf(stack, true), from, to, typed, quoted: true, named: false, present: [] };
  return undefined;
}

/** The cursor is in or at the end of a bare word (true, false, null, a number) that starts at `from`. */
function bare(text: string, stack: Frame[], from: number, pos: number, end: number): JsonContext | undefined {
  const frame = stack[stack.length - 1];
  if (frame && frame.expect !== "value" && !(frame.kind === "object" && frame.expect === "key")) return undefined;
  const kind = frame?.kind === "object" && frame.expect === "key" ? "key" : "value";
  return { kind, path: pathOf(stack, kind === "value"), from, to: end, typed: text.slice(from, pos), quoted: false, named: false, present: frame?.kind === "object" ? frame.keys : [] };
}

/** The path the frames stand for: each container's current member or item; the innermost one's only for a value. */
function pathOf(stack: Frame[], withTop: boolean): (string | number)[] {
  const frames = withTop ? stack : stack.slice(0, -1);
  return frames.map((f) => (f.kind === "object" ? (f.key ?? "") : f.index));
}

function unescape(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}
