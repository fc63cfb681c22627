// `warden members list|remove` (README, Command line): the tenant's members with the keys each
// created, and a removal that keeps those keys working or, with --revoke-keys, revokes them in the
// same step (docs/api.md, DELETE /customer/members/{member_id}); with WARDEN_URL and WARDEN_TOKEN.
import { parseArgs } from "node:util";
import { callService } from "./client.ts";
import type { UsageLine } from "./usage.ts";

export const MEMBERS_LINES: UsageLine[] = [
  { synopsis: "members list", summary: "the tenant's members with their role and the keys each created that still work (with WARDEN_TOKEN)" },
  {
    synopsis: "members remove MEMBER_ID [--revoke-keys]",
    summary: "remove a member (your own id: leave); prints the keys they created, kept working (kept_keys) or, with --revoke-keys, revoked in the same step (revoked_keys)",
  },
];

/** Bad usage: exit 2 with the message and the usage. */
export class MembersUsageError extends Error {}

export async function runMembers(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, options: { "revoke-keys": { type: "boolean" } }, strict: true, allowPositionals: true });
  const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));
  switch (sub) {
    case "list": {
      if (positionals.length > 0 || Object.keys(values).length > 0) throw new MembersUsageError("members list takes no arguments");
      print(await callService("GET", "/customer/members", { auth: "token" }));
      return 0;
    }
    case "remove": {
      if (positionals.length !== 1) throw new MembersUsageError("members remove needs one MEMBER_ID (mbr_...)");
      const query = values["revoke-keys"] ? "?revoke_keys=true" : "";
      const removed = await callService("DELETE", `/customer/members/${encodeURIComponent(positionals[0]!)}${query}`, { auth: "token" });
      print(removed);
      // Said on stderr too, so that a person reading the terminal does not miss keys left working.
      const kept = removed.kept_keys as { key_id: string; label: string }[];
      if (kept.length > 0) {
        console.error(`${kept.length} key(s) this member created keep working: ${kept.map((k) => `${k.key_id} (${k.label})`).join(", ")}; revoke them with --revoke-keys next time, or one by one.`);
      }
      return 0;
    }
    default:
      throw new MembersUsageError(sub === undefined ? "members needs a command: list or remove" : `unknown members command: ${sub}`);
  }
}
