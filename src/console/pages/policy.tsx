// /console/policy: the active policy and its versions (with a diff of any two); on a plan with
// custom_policy, the editor (./policy-editor.tsx: draft, tests, impact, publish) and "restore".
// docs/policy.md has the language.
import { useState } from "preact/hooks";
import { api } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { loadCatalog, planAllows } from "../app/catalog.ts";
import { useMemberNames } from "../app/names.ts";
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
    // Roles that may only read see the document, not the editor (docs/api.md, "Teams").
    const tests = editable ? await api<{ cases: unknown[] }>("GET", "/customer/policy/tests") : { cases: [] };
    return { policy, catalog, editable, cases: tests.cases };
  }, [changed, session.account.plan]);
  const data = loaded.data;
  const policy = data?.policy;
  const required = data?.catalog.features.find((f) => f.feature === "custom_policy")?.required_plan ?? "pro";
  const refresh = () => setChanged((n) => n + 1);
  const canDraft = session.can("POST /customer/policy/test");
  const canPublish = session.can("PUT /customer/policy");
  const who = useMemberNames(session.account.member_id);

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
          {policy.policy_id === DEFAULT_POLICY_ID && <FirstPublishNote tenantId={session.account.tenant_id} />}
          {data.editable && canDraft ? (
            // A fresh editor for each active version: its draft starts from the new document.
            <PolicyEditor key={`${policy.version}`} active={policy} storedCases={data.cases} onPublished={refresh} canPublish={canPublish} />
          ) : (
            <>
              {!data.editable ? (
                <Notice>
                  <p>
                    Editing the policy needs the <strong>{required}</strong> plan. <Link href={`${BASE}/plan`}>Request an upgrade</Link>
                  </p>
                </Notice>
              ) : (
                <p class="small" data-testid="policy-read-only">
                  As {session.account.role} you read the policy; drafting and testing need the developer role, publishing the admin role.
                </p>
              )}
              <h2 id="doc-title">Document</h2>
              <pre class="json" tabIndex={0} aria-labelledby="doc-title">
                {pretty(policy.document)}
              </pre>
            </>
          )}
          <PolicyVersions active={policy.version} canRestore={data.editable && session.can("POST /customer/policy/versions/:version/restore")} changed={changed} onRestored={refresh} who={who} />
        </>
      )}
    </section>
  );
}

const DEFAULT_POLICY_ID = "pol_default";

/**
 * Says before it happens that the first publish changes the policy's id and starts at version 2:
 * the default is one document shared by every account, a tenant's own versions carry its own id
 * (`pol_` and the account id's 22 characters, sql/schema/07_policies.sql) and count on from it.
 */
function FirstPublishNote({ tenantId }: { tenantId: string }) {
  const own = `pol_${tenantId.slice("cust_".length)}`;
  return (
    <Notice>
      <p data-testid="first-publish-note">
        This is the built-in default, <code>pol_default</code> version 1, the same document for every account. Your first publish makes{" "}
        <code class="mono">{own}</code> <strong>version 2</strong>: your versions carry your account's id and count on from the default, which stays version 1 of your history, so each
        receipt names exactly the policy it was decided under.
      </p>
    </Notice>
  );
}
