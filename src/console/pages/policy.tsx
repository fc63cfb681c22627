// /console/policy: the active policy and its versions (with a diff of any two); on a plan with
// custom_policy, the editor (./policy-editor.tsx: draft, tests, impact, publish) and "restore".
// docs/policy.md has the language.
import { useState } from "preact/hooks";
import { api } from "../app/api.ts";
import type { Session } from "../app/app.tsx";
import { loadCatalog, planAllows } from "../app/catalog.ts";
import { BASE, Link } from "../app/router.tsx";
import { ErrorNotice, Loading, Notice, PageTitle, useLoad } from "../app/ui.tsx";
import { pretty } from "../app/policy-text.ts";
import { PolicyEditor, type Policy } from "./policy-editor.tsx";
import { PolicyVersions } from "./policy-versions.tsx";

export function PolicyPage({ session }: { session: Session }) {
  // Counts publishes and restores: the policy, the saved tests and the version list load again.
  const [changed, setChanged] = useState(0);
  const loaded = useLoad(async () => {
    const [policy, catalog] = await Promise.all([api<Policy>("GET", "/customer/policy"), loadCatalog()]);
    const editable = planAllows(catalog, session.account.plan, "custom_policy");
    const tests = editable ? await api<{ cases: unknown[] }>("GET", "/customer/policy/tests") : { cases: [] };
    return { policy, catalog, editable, cases: tests.cases };
  }, [changed, session.account.plan]);
  const data = loaded.data;
  const policy = data?.policy;
  const required = data?.catalog.features.find((f) => f.feature === "custom_policy")?.required_plan ?? "pro";
  const refresh = () => setChanged((n) => n + 1);

  return (
    <section>
      <PageTitle text="Policy" />
      <p>The rules every protect call is decided by, first match wins. Receipts name the exact version they were decided under.</p>
      <ErrorNotice error={loaded.error} />
      {loaded.loading && !policy && <Loading what="the policy" />}
      {data && policy && (
        <>
          <dl class="facts">
            <dt>Policy</dt>
            <dd class="mono" data-testid="policy-version">
              {policy.policy_id} v{policy.version}
            </dd>
            <dt>Hash</dt>
            <dd class="mono wrap">{policy.hash}</dd>
          </dl>
          {data.editable ? (
            // A fresh editor for each active version: its draft starts from the new document.
            <PolicyEditor key={`${policy.version}`} active={policy} storedCases={data.cases} onPublished={refresh} />
          ) : (
            <>
              <Notice>
                <p>
                  Editing the policy needs the <strong>{required}</strong> plan. <Link href={`${BASE}/plan`}>Request an upgrade</Link>
                </p>
              </Notice>
              <h2 id="doc-title">Document</h2>
              <pre class="json" tabIndex={0} aria-labelledby="doc-title">
                {pretty(policy.document)}
              </pre>
            </>
          )}
          <PolicyVersions active={policy.version} canRestore={data.editable} changed={changed} onRestored={refresh} />
        </>
      )}
    </section>
  );
}
