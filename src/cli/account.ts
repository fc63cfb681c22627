// `warden signup`: an account, its session token and its first API key, from the command line;
// with --env as `export` lines for a POSIX shell, so that the next commands find them.
import { callService } from "./client.ts";

/** A value the shell reads back as itself: single quotes, each ' written as '\''. */
function shellQuoted(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

export async function runSignup(opts: { email: string; password: string; env: boolean }): Promise<number> {
  const account = await callService("POST", "/auth/signup", { auth: "none", body: { email: opts.email, password: opts.password } });
  if (!opts.env) {
    console.log(JSON.stringify(account, null, 2));
  } else {
    console.log(`# ${account.tenant_id} (${opts.email}): a session token (24 hours) and the first API key (shown once)`);
    console.log(`export WARDEN_TOKEN=${shellQuoted(String(account.token))}`);
    console.log(`export WARDEN_API_KEY=${shellQuoted(String(account.api_key))}`);
  }
  console.error("note: the API key is shown this once");
  return 0;
}
