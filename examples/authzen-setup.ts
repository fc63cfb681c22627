// Loads an AuthZEN interop scenario's policy and entities into a warden tenant through the API
// (docs/authzen.md, "The working group's interop runners"): the policy names no user; the users
// are entities, so the policy stays the same size however many there are. Used by
// authzen-todo/setup.ts and authzen-gateway/setup.ts.
//
// WARDEN_URL (https://127.0.0.1:8443), WARDEN_TOKEN (a session of an owner, admin or developer of a
// tenant whose plan has custom_policy, Pro), WARDEN_INSECURE=1 for the development certificate.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export async function setup(dir: string): Promise<void> {
  const url = (process.env.WARDEN_URL || "https://127.0.0.1:8443").replace(/\/+$/, "");
  const token = process.env.WARDEN_TOKEN;
  if (!token) {
    console.error("setup: set WARDEN_TOKEN to a session token (warden login, or POST /auth/login) of an owner, admin or developer of a Pro tenant");
    process.exit(2);
  }
  const tls = process.env.WARDEN_INSECURE === "1" ? ({ tls: { rejectUnauthorized: false } } as RequestInit) : {};
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      ...tls,
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok) {
      console.error(`setup: PUT ${path}: ${res.status} ${answer.error ?? ""} ${answer.message ?? ""}`);
      process.exit(1);
    }
    return answer;
  };
  const read = (name: string) => JSON.parse(readFileSync(join(dir, name), "utf8"));

  const { entities } = read("entities.json") as { entities: unknown[] };
  const stored = await call("/customer/entities", { entities });
  console.log(`entities: ${stored.upserted} stored (version ${stored.version})`);
  const policy = await call("/customer/policy", { document: read("policy.json") });
  console.log(`policy: version ${policy.version} active`);
}
