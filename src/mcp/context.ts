// What the MCP gateway asks warden about a `tools/call` (docs/mcp.md, "What warden is asked"):
// the action `mcp.<server>.<tool>` and the call's arguments as a protect input's `context`, within
// the limits of ProtectInput (src/decide/policy.ts). Pure functions: no I/O but hashing.
import { canonicalJson, sha256Hex } from "../crypto/canonical.ts";

/** ProtectInput's limits on `action` and `context` (docs/api.md, POST /v1/protect). */
export const ACTION_PATTERN = /^[A-Za-z0-9_.:/-]+$/;
export const ACTION_MAX = 200;
const CONTEXT_KEY = /^[A-Za-z0-9_.-]{1,64}$/;
export const CONTEXT_MAX_ENTRIES = 32;
export const CONTEXT_STRING_MAX = 500;

/** Keys the gateway sets itself; an argument that flattens to one of them is omitted. */
export const RESERVED_KEYS = ["arguments_sha256", "arguments_omitted", "arguments_truncated"] as const;
/** Room left for the arguments' own scalars. */
export const ARGUMENT_ENTRIES_MAX = CONTEXT_MAX_ENTRIES - RESERVED_KEYS.length;

/**
 * The server part of an action: the --name given or the name the upstream advertises in its
 * `initialize` answer, with every character outside the action pattern, and `.` (which would
 * make `mcp.<server>.<tool>` ambiguous), replaced by `_` (a name is chosen by whoever runs the
 * gateway, not by the agent). Empty: `upstream`.
 */
export function serverPart(name: string | undefined): string {
  const cleaned = (name ?? "").trim().replace(/[^A-Za-z0-9_:/-]/g, "_");
  return cleaned === "" ? "upstream" : cleaned.slice(0, 100);
}

/**
 * `mcp.<server>.<tool>`, or why there is none. A tool's name is not rewritten: two names that
 * rewrote to one action would share its rules, so a tool named outside the action pattern (the
 * MCP specification asks for [A-Za-z0-9_.-]) cannot be decided and is refused.
 */
export function toolAction(server: string, tool: unknown): { action: string } | { error: string } {
  if (typeof tool !== "string" || tool === "") return { error: "the call names no tool" };
  const action = `mcp.${server}.${tool}`;
  if (!ACTION_PATTERN.test(tool)) return { error: `the tool name ${JSON.stringify(tool.slice(0, 80))} has characters outside ${ACTION_PATTERN.source}: no action can name it` };
  if (action.length > ACTION_MAX) return { error: `the action ${action.slice(0, 80)}... is longer than ${ACTION_MAX} characters` };
  return { action };
}

export interface Flattened {
  /** The scalars that fit, by dotted path, in the order they were met. */
  entries: Record<string, string | number | boolean>;
  /** Scalars left out: a path that is not a valid key, a reserved key, or past the entries' cap. */
  omitted: number;
  /** Strings cut to their first CONTEXT_STRING_MAX characters. */
  truncated: number;
}

/**
 * The arguments' scalars (strings, numbers, booleans) by path: object keys and array indexes
 * joined with `.` (`{"files": [{"path": "/a"}]}` gives `files.0.path`). The walk is depth first
 * with object keys in JCS order (UTF-16 code units), so the same arguments give the same context
 * whatever order the agent wrote them in. `null` and empty objects or arrays add nothing. A
 * string over CONTEXT_STRING_MAX characters keeps its first ones (a prefix rule still sees the
 * start); a path that is not a valid context key (^[A-Za-z0-9_.-]{1,64}$) or that comes after
 * the first ARGUMENT_ENTRIES_MAX scalars is omitted. Both are counted.
 */
export function flattenArguments(args: unknown): Flattened {
  const out: Flattened = { entries: {}, omitted: 0, truncated: 0 };
  let count = 0;
  const reserved = new Set<string>(RESERVED_KEYS);
  const walk = (value: unknown, path: string) => {
    if (value === null || value === undefined) return;
    if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, path === "" ? String(i) : `${path}.${i}`));
      return;
    }
    if (typeof value === "object") {
      for (const key of Object.keys(value as object).sort()) walk((value as Record<string, unknown>)[key], path === "" ? key : `${path}.${key}`);
      return;
    }
    if (typeof value !== "string" && typeof value !== "boolean" && !(typeof value === "number" && Number.isFinite(value))) return;
    if (!CONTEXT_KEY.test(path) || reserved.has(path) || count >= ARGUMENT_ENTRIES_MAX) {
      out.omitted++;
      return;
    }
    count++;
    if (typeof value === "string" && value.length > CONTEXT_STRING_MAX) {
      // Do not end on the first half of a surrogate pair.
      const cut = /[\uD800-\uDBFF]/.test(value[CONTEXT_STRING_MAX - 1]) ? CONTEXT_STRING_MAX - 1 : CONTEXT_STRING_MAX;
      out.entries[path] = value.slice(0, cut);
      out.truncated++;
      return;
    }
    out.entries[path] = value;
  };
  // Top-level scalars (arguments are an object in MCP): under the key `value`.
  if (args !== null && typeof args === "object") walk(args, "");
  else walk(args, "value");
  return out;
}

/**
 * Arguments the gateway will not decide on (docs/mcp.md, "What warden is asked"): nested deeper than
 * ARGUMENTS_DEPTH_MAX, or whose JCS form is over ARGUMENTS_BYTES_MAX. Such a call is refused
 * with a message that says so; it never reaches warden or the upstream.
 */
export const ARGUMENTS_DEPTH_MAX = 32;
export const ARGUMENTS_BYTES_MAX = 4 * 1024 * 1024;

/** Why the arguments are too large to decide, or undefined when they are not. */
export function argumentsTooLarge(args: unknown): string | undefined {
  const deep = (value: unknown, depth: number): boolean => {
    if (value === null || typeof value !== "object") return false;
    if (depth >= ARGUMENTS_DEPTH_MAX) return true;
    return Object.values(value as object).some((v) => deep(v, depth + 1));
  };
  if (deep(args, 0)) return `the arguments are nested deeper than ${ARGUMENTS_DEPTH_MAX} levels: too deep to decide`;
  const bytes = new TextEncoder().encode(canonicalJson(args ?? {})).length;
  if (bytes > ARGUMENTS_BYTES_MAX) return `the arguments are ${bytes} bytes in JCS form, over ${ARGUMENTS_BYTES_MAX}: too large to decide`;
  return undefined;
}

/** The SHA-256 of the arguments' JCS form (RFC 8785), 0x-hex; `{}` when the call has none. */
export function argumentsHash(args: unknown): Promise<string> {
  return sha256Hex(canonicalJson(args ?? {}));
}

/** The protect input's context of a call: its flattened arguments, then the gateway's own keys. */
export async function callContext(args: unknown): Promise<{ context: Record<string, string | number | boolean>; argumentsSha256: string; flattened: Flattened }> {
  const flattened = flattenArguments(args ?? {});
  const argumentsSha256 = await argumentsHash(args);
  const context = { ...flattened.entries, arguments_sha256: argumentsSha256, arguments_omitted: flattened.omitted, arguments_truncated: flattened.truncated };
  return { context, argumentsSha256, flattened };
}
