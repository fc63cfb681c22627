// The policy editor's problems, each at its line: JSON syntax errors found in the page, and the
// server's 400 invalid_request, whose message names the JSON path it refused
// ("body/document/rules/0/effect: Expected union value").
import { JsonSyntaxError, lineOf, parseWithLines, readablePath } from "./json-lines.ts";

/** The editor's two texts: the policy document and the test cases. */
export type EditorField = "document" | "cases";

export interface Problem {
  field: EditorField;
  /** 1-based line in that field's text; absent when the text gives no place. */
  line?: number;
  message: string;
}

const REFUSAL = /^(?:body\/)?(document|cases)(\/\S*)?: (.*)$/s;

/** A friendlier word for TypeBox's where people most often trip. */
function explain(pointer: string, problem: string): string {
  if (/\/(default_)?effect$/.test(pointer) && /union/i.test(problem)) return 'must be "allow" or "deny"';
  return problem;
}

/** Parses one field's text: its value, or the syntax problem at its line. */
export function parseField(field: EditorField, text: string): { value: unknown } | { problem: Problem } {
  try {
    return { value: parseWithLines(text).value };
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return { problem: { field, line: error.line, message: `Not valid JSON: ${error.message}` } };
  }
}

/**
 * The server's validation message placed in the text it concerns: the line of the refused value
 * (or of the nearest enclosing one that is in the text, for a missing field), the path written
 * for people. A message without a path stays on `fallback`, without a line.
 */
export function locateRefusal(message: string, texts: Record<EditorField, string>, fallback: EditorField = "document"): Problem {
  const match = REFUSAL.exec(message);
  if (!match) return { field: fallback, message };
  const field = match[1] as EditorField;
  const pointer = match[2] ?? "";
  let line: number | undefined;
  try {
    line = lineOf(parseWithLines(texts[field]).lines, pointer);
  } catch {
    // The text changed into invalid JSON since it was sent: no line to point at.
  }
  const where = readablePath(pointer);
  const problem = explain(pointer, match[3]);
  return { field, line, message: where ? `${where}: ${problem}` : problem };
}
