// /console/policy: the active policy; on a plan with custom_policy, an editor that publishes a new
// version, with the server's validation error shown at the field (docs/policy.md has the language).
import { useState } from "preact/hooks";
import { api, ApiError } from "../app/api.ts";
import type { Session } from "../app/app.tsx";
import { loadCatalog, planAllows } from "../app/catalog.ts";
import { BASE, Link } from "../app/router.tsx";
import { announce, ErrorNotice, Field, Loading, Notice, PageTitle, useLoad, useSubmit } from "../app/ui.tsx";

interface Policy {
  policy_id: string;
  version: number;
  hash: string;
  document: unknown;
}

// "body/document/rules/0/effect: Expected union value" -> "rules[0].effect: Expected union value".
export function policyProblem(message: string): string {
  const match = /^body\/document(\S*): (.*)$/s.exec(message);
  if (!match) return message;
  const path = match[1]
    .split("/")
    .filter(Boolean)
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join("");
  // TypeBox says "Expected union value" for an effect that is neither of its two words.
  const problem = /effect$/.test(path) && /union/i.test(match[2]) ? 'must be "allow" or "deny"' : match[2];
  return path ? `${path}: ${problem}` : problem;
}

export function PolicyPage({ session }: { session: Session }) {
  const loaded = useLoad(() => Promise.all([api<Policy>("GET", "/customer/policy"), loadCatalog()]));
  // null: the editor shows the active document; a string: the reader's edits.
  const [edited, setEdited] = useState<string | null>(null);
  const form = useSubmit((code) => (code === "invalid_request" || code === "invalid_json" ? "document" : undefined));
  const policy = loaded.data?.[0];
  const catalog = loaded.data?.[1];
  const editable = !!catalog && planAllows(catalog, session.account.plan, "custom_policy");
  const required = catalog?.features.find((f) => f.feature === "custom_policy")?.required_plan ?? "pro";

  const text = edited ?? (policy ? JSON.stringify(policy.document, null, 2) : "");

  const publish = (event: Event) => {
    event.preventDefault();
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch (error) {
      return form.fail({ document: `Not valid JSON: ${(error as Error).message}` });
    }
    if (document === null || typeof document !== "object" || Array.isArray(document)) return form.fail({ document: "The policy must be a JSON object." });
    return form.run(async () => {
      try {
        await api<Policy>("PUT", "/customer/policy", { json: { document } });
      } catch (error) {
        if (error instanceof ApiError && error.code === "invalid_request") throw new ApiError(error.status, error.code, policyProblem(error.message), error.body);
        throw error;
      }
      announce("Policy published: new decisions use the new version.");
      setEdited(null);
      loaded.reload();
    });
  };

  return (
    <section>
      <PageTitle text="Policy" />
      <p>
        The rules every protect call is decided by, first match wins. Receipts name the exact version they were decided under.
      </p>
      <ErrorNotice error={loaded.error} />
      {loaded.loading && !policy && <Loading what="the policy" />}
      {policy && (
        <>
          <dl class="facts">
            <dt>Policy</dt>
            <dd class="mono" data-testid="policy-version">
              {policy.policy_id} v{policy.version}
            </dd>
            <dt>Hash</dt>
            <dd class="mono wrap">{policy.hash}</dd>
          </dl>
          {editable ? (
            <form onSubmit={publish} ref={form.formRef} noValidate>
              <ErrorNotice error={form.error} />
              <Field
                multiline
                label="Policy document (JSON)"
                name="document"
                class="mono"
                rows={24}
                spellcheck={false}
                value={text}
                onInput={(e: Event) => setEdited((e.currentTarget as HTMLTextAreaElement).value)}
                hint="Publishing makes a new immutable version; earlier versions are kept for their receipts."
                error={form.fields.document}
              />
              <button type="submit" class="primary" disabled={form.busy}>
                {form.busy ? "Publishing…" : "Publish new version"}
              </button>
            </form>
          ) : (
            <>
              <Notice>
                <p>
                  Editing the policy needs the <strong>{required}</strong> plan. <Link href={`${BASE}/plan`}>Request an upgrade</Link>
                </p>
              </Notice>
              <h2 id="doc-title">Document</h2>
              <pre class="json" tabIndex={0} aria-labelledby="doc-title">
                {JSON.stringify(policy.document, null, 2)}
              </pre>
            </>
          )}
        </>
      )}
    </section>
  );
}
