// `warden keys list|update|rotate` (README, Command line): a tenant's API keys and what each may
// do (docs/api.md, "Keys for agents"), with WARDEN_URL and WARDEN_TOKEN (a session).
import { parseArgs } from "node:util";
import { callService } from "./client.ts";
import type { UsageLine } from "./usage.ts";

export const KEYS_LINES: UsageLine[] = [
  { synopsis: "keys list", summary: "every key with its status, expiry, enabled, actions, limits, allowed IPs, metadata and last use (with WARDEN_TOKEN)" },
  {
    synopsis: "keys update KEY_ID [FLAGS]",
    summary: "change a key's properties: --label L, --expires-at TIME, --enable or --disable, --actions A,B, --limits protect_per_day=N,per_second=N,burst=N, --allowed-ips CIDR,CIDR, --metadata k=v,k=v; a flag not given stays as it is, the value none clears",
  },
  { synopsis: "keys rotate KEY_ID [--overlap SECONDS]", summary: "a new secret (printed once); the old one still works SECONDS (0 to 86400, default 0)" },
];

/** Bad usage: exit 2 with the message and the usage. */
export class KeysUsageError extends Error {}

const list = (text: string) => text.split(",").map((s) => s.trim()).filter(Boolean);

/** `k=v,k=v` as an object of the values as numbers (limits) or strings (metadata). */
function pairs(text: string, flag: string, numbers: boolean): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const part of list(text)) {
    const eq = part.indexOf("=");
    if (eq <= 0) throw new KeysUsageError(`${flag}: "${part}" is not name=value`);
    const value = part.slice(eq + 1);
    if (numbers && !/^\d+$/.test(value)) throw new KeysUsageError(`${flag}: ${part.slice(0, eq)} needs a whole number`);
    out[part.slice(0, eq)] = numbers ? Number(value) : value;
  }
  return out;
}

/** The PATCH body the flags ask for. */
export function updateBody(values: Record<string, string | boolean | undefined>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const clearOr = <T>(flag: string, parse: (text: string) => T) => {
    const text = values[flag];
    if (typeof text === "string") body[flag.replace(/-/g, "_")] = text === "none" ? null : parse(text);
  };
  if (typeof values.label === "string") body.label = values.label;
  clearOr("expires-at", (text) => {
    const at = Date.parse(text);
    if (Number.isNaN(at)) throw new KeysUsageError(`--expires-at: "${text}" is not an ISO 8601 time (or none)`);
    return new Date(at).toISOString();
  });
  if (values.enable && values.disable) throw new KeysUsageError("--enable and --disable exclude each other");
  if (values.enable) body.enabled = true;
  if (values.disable) body.enabled = false;
  clearOr("actions", list);
  clearOr("limits", (text) => pairs(text, "--limits", true));
  clearOr("allowed-ips", list);
  clearOr("metadata", (text) => pairs(text, "--metadata", false));
  return body;
}

export async function runKeys(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      label: { type: "string" },
      "expires-at": { type: "string" },
      enable: { type: "boolean" },
      disable: { type: "boolean" },
      actions: { type: "string" },
      limits: { type: "string" },
      "allowed-ips": { type: "string" },
      metadata: { type: "string" },
      overlap: { type: "string" },
    },
    strict: true,
    allowPositionals: true,
  });
  const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));
  const keyId = () => {
    if (positionals.length !== 1) throw new KeysUsageError(`keys ${sub} needs one KEY_ID`);
    return encodeURIComponent(positionals[0]!);
  };
  switch (sub) {
    case "list": {
      if (positionals.length > 0 || Object.keys(values).length > 0) throw new KeysUsageError("keys list takes no arguments");
      const keys: unknown[] = [];
      let cursor: string | null = null;
      do {
        const page = await callService("GET", `/customer/keys?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { auth: "token" });
        keys.push(...(page.keys as unknown[]));
        cursor = page.next_cursor as string | null;
      } while (cursor);
      print({ ok: true, keys });
      return 0;
    }
    case "update": {
      const id = keyId();
      if (values.overlap !== undefined) throw new KeysUsageError("keys update takes no --overlap (keys rotate does)");
      const body = updateBody(values);
      if (Object.keys(body).length === 0) throw new KeysUsageError("keys update needs at least one property to change");
      print(await callService("PATCH", `/customer/keys/${id}`, { auth: "token", body }));
      return 0;
    }
    case "rotate": {
      const id = keyId();
      const overlap = values.overlap === undefined ? undefined : Number(values.overlap);
      if (overlap !== undefined && !(Number.isInteger(overlap) && overlap >= 0 && overlap <= 86_400)) throw new KeysUsageError("--overlap is a whole number of seconds from 0 to 86400");
      print(await callService("POST", `/customer/keys/${id}/rotate`, { auth: "token", body: overlap === undefined ? undefined : { overlap } }));
      return 0;
    }
    default:
      throw new KeysUsageError(sub === undefined ? "keys needs a command: list, update or rotate" : `unknown keys command: ${sub}`);
  }
}
