// Policy documents and test cases as the editor and the diff show them: two-space JSON with keys
// in the order people read a rule. PostgreSQL's jsonb keeps its own key order, so a document read
// back differs in order from the one published: without one order, a diff would show every rule.

const KEY_ORDER = ["default_effect", "default_reason", "rules", "name", "id", "effect", "decision", "reason", "rule", "when", "input", "key_id", "expect", "action", "actions", "resource", "resources", "keys", "amount", "currency", "context"];
const rank = (key: string) => {
  const at = KEY_ORDER.indexOf(key);
  return at < 0 ? KEY_ORDER.length : at;
};

function ordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(ordered);
  if (value === null || typeof value !== "object") return value;
  const keys = Object.keys(value).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(keys.map((k) => [k, ordered((value as Record<string, unknown>)[k])]));
}

/** `value` as the editor shows it: the same JSON value, keys in reading order, indented by two. */
export function pretty(value: unknown): string {
  return JSON.stringify(ordered(value), null, 2);
}
