// The policy editor's problems, each at its place in the text: JSON syntax errors and the schema's
// refusals found in the page (./schema-help.ts, loaded with the editor), and the server's
// 400 invalid_request, whose message names the JSON path it refused
// ("body/document/rules/0/effect: Expected union value").
import { JsonSyntaxError, parseWithLines, placeOf, readablePath } from "./json-lines.ts";

/** The editor's two texts: the policy document and the test cases. */
export type EditorField = "document" | "cases";

export interface Problem {
  field: EditorField;
  /** 1-based line in that field's text; absent when the text gives no place. */
  line?: number;
  /** The offsets to mark, [from, to), when known. */
  from?: number;
  to?: number;
  /** The JSON pointer refused, when the problem is about a value. */
  pointer?: string;
  /** Who found it: the service's refusal of what was sent, or the page's own check of the text. */
  source: "service" | "browser";
  message: string;
}

const REFUSAL = /^(?:body\/)?(document|cases)(\/\S*)?: (.*)$/s;

/** A friendlier word for TypeBox's where people most often trip (the page's own check says more: ./schema-help.ts). */
function explain(pointer: string, problem: string): string {
  if (!/union/i.test(problem)) return problem;
  if (/^\/default_effect$/.test(pointer)) return 'must be "allow" or "deny"';
  if (/^\/rules\/\d+\/effect$/.test(pointer)) return 'must be "allow", "deny" or "require_approval"';
  return problem;
}

/** Parses one field's text: its value, or the syntax problem at its place. */
export function parseField(field: EditorField, text: string): { value: unknown } | { problem: Problem } {
  try {
    return { value: parseWithLines(text).value };
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return { problem: { field, line: error.line, from: error.at, to: Math.min(error.at + 1, text.length), source: "browser", message: `Not valid JSON: ${error.message}` } };
  }
}

/**
 * The server's validation message placed in the text it concerns: the place of the refused value
 * (or of the nearest enclosing one that is in the text, for a missing field), the path written
 * for people. A message without a path stays on `fallback`, without a line.
 */
export function locateRefusal(message: string, texts: Record<EditorField, string>, fallback: EditorField = "document"): Problem {
  const match = REFUSAL.exec(message);
  if (!match) return { field: fallback, source: "service", message };
  const field = match[1] as EditorField;
  const pointer = match[2] ?? "";
  let place: { line: number; from: number; to: number } | undefined;
  try {
    place = placeOf(parseWithLines(texts[field]), pointer);
  } catch {
    // The text changed into invalid JSON since it was sent: no line to point at.
  }
  const where = readablePath(pointer);
  const problem = explain(pointer, match[3]);
  return { field, ...place, pointer, source: "service", message: where ? `${where}: ${problem}` : problem };
}

/**
 * The page's own problems and the service's refusals together, in the text's order, one per JSON
 * path: where both name a path, it is marked as the service's refusal (the service decides), in
 * the page's words, which name what is allowed there (the same schema rule, written for people).
 */
export function mergeProblems(own: Problem[], refused: Problem[]): Problem[] {
  const mine = new Map(own.filter((p) => p.pointer !== undefined).map((p) => [p.pointer, p]));
  const named = new Set(refused.map((p) => p.pointer));
  const theirs = refused.map((p) => (p.pointer !== undefined && mine.has(p.pointer) ? { ...p, message: mine.get(p.pointer)!.message } : p));
  const all = [...theirs, ...own.filter((p) => p.pointer === undefined || !named.has(p.pointer))];
  return all.sort((a, b) => (a.from ?? Infinity) - (b.from ?? Infinity));
}
