// The dashboard's next step: a protect call to paste into a shell, for this server and one of the
// tenant's keys. Pure, unit-tested in test/console/console.test.ts.

/** A key as the snippet names it: its id and the last characters of its secret. */
export interface SnippetKey {
  key_id: string;
  hint: string;
}

// A server on this machine serves the development certificate it made itself (README, Quick start).
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * `curl` asking POST /v1/protect on `origin` with the secret of `key` from $WARDEN_API_KEY: the
 * secret itself is never in the page after it was shown once. Only the key's id and hint (both of
 * a fixed alphabet) go into the text, never its label, so nothing a person typed reaches a shell.
 */
export function protectSnippet(origin: string, key: SnippetKey): string {
  const local = LOCAL_HOSTS.has(new URL(origin).hostname);
  return [
    `# WARDEN_API_KEY: the secret you saved for ${key.key_id} (it ends in …${key.hint})`,
    ...(local ? ["# -k: a server on this machine uses its self-signed development certificate"] : []),
    `curl -s${local ? "k" : ""} ${origin}/v1/protect \\`,
    `  -H 'content-type: application/json' -H "x-api-key: $WARDEN_API_KEY" \\`,
    `  -d '{"action":"payment.send","resource":"vendor/acme","amount":250,"currency":"USD"}'`,
  ].join("\n");
}
