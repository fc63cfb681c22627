// The policy's versions, newest first: a line diff of any two, and (with custom_policy) "restore",
// which publishes that version's document again as a new version once the saved tests pass.
import { useEffect, useState } from "preact/hooks";
import { api, newIdempotencyKey } from "../app/api.ts";
import { lineDiff, type DiffLine } from "../app/line-diff.ts";
import { diffPolicies, type PolicyDiff } from "../../policies/diff.ts";
import type { PolicyDocument } from "../../decide/policy.ts";
import { announce, ConfirmButton, ErrorNotice, Loading, When } from "../app/ui.tsx";
import { pretty } from "../app/policy-text.ts";
import { refusedResults, TestResults, type Policy, type ShownResult } from "./policy-editor.tsx";

interface Version {
  version: number;
  hash: string;
  created_at: string;
  rules: number;
  published_by: string | null;
}

const PAGE_SIZE = 50;
const MARK = { same: "  ", add: "+ ", del: "- " } as const;

export function PolicyVersions({ active, canRestore, changed, onRestored, who }: { active: number; canRestore: boolean; changed: number; onRestored: () => void; who: (memberId: string | null) => string }) {
  const [versions, setVersions] = useState<Version[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [pair, setPair] = useState<{ from?: number; to?: number }>({});
  const [diff, setDiff] = useState<{ from: number; to: number; lines: DiffLine[]; rules: PolicyDiff } | null>(null);
  const [busy, setBusy] = useState(false);
  // A restore refused by the saved tests: their results, with what each expected.
  const [refusedBy, setRefusedBy] = useState<ShownResult[] | undefined>(undefined);

  const load = async (cursor: string | null) => {
    setLoading(true);
    try {
      const page = await api<{ versions: Version[]; next_cursor: string | null }>("GET", `/customer/policy/versions?limit=${PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      setVersions((known) => (cursor ? [...known, ...page.versions] : page.versions));
      setNext(page.next_cursor);
    } catch (caught) {
      setError(caught);
    } finally {
      setLoading(false);
    }
  };
  // Again after every publish or restore: the list starts from the newest.
  useEffect(() => void load(null), [changed]);

  const from = pair.from ?? versions[1]?.version ?? versions[0]?.version;
  const to = pair.to ?? versions[0]?.version;

  const compare = async () => {
    if (from === undefined || to === undefined) return;
    setError(null);
    setRefusedBy(undefined);
    setBusy(true);
    try {
      const [a, b] = await Promise.all([from, to].map((v) => api<Policy>("GET", `/customer/policy/versions/${v}`)));
      const lines = lineDiff(pretty(a.document), pretty(b.document));
      // Rule by rule as `warden policy diff` says it, then line by line.
      setDiff({ from, to, lines, rules: diffPolicies(a.document as PolicyDocument, b.document as PolicyDocument) });
      const added = lines.filter((l) => l.op === "add").length;
      const removed = lines.filter((l) => l.op === "del").length;
      announce(added + removed === 0 ? `Versions ${from} and ${to} have the same document.` : `Version ${from} to ${to}: ${added} lines added, ${removed} removed.`);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  const restore = async (version: number) => {
    setError(null);
    setRefusedBy(undefined);
    setBusy(true);
    try {
      const published = await api<Policy>("POST", `/customer/policy/versions/${version}/restore`, { idempotencyKey: newIdempotencyKey() });
      announce(`Version ${version} restored as version ${published.version}.`);
      onRestored();
    } catch (caught) {
      setRefusedBy(await refusedResults(caught));
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  const choice = (label: string, value: number | undefined, set: (v: number) => void) => (
    <div class="field">
      <label for={`diff-${label}`}>{label} version</label>
      <select id={`diff-${label}`} value={value} onChange={(e) => set(Number((e.currentTarget as HTMLSelectElement).value))}>
        {versions.map((v) => (
          <option key={v.version} value={v.version}>
            v{v.version}
          </option>
        ))}
      </select>
    </div>
  );

  return (
    <section aria-labelledby="versions-title">
      <h2 id="versions-title">Versions</h2>
      <ErrorNotice error={error} />
      {refusedBy && <TestResults title="Saved tests under the restored document" results={refusedBy} />}
      {loading && versions.length === 0 ? (
        <Loading what="versions" />
      ) : (
        <>
          <div class="table-wrap">
            <table class="stack" aria-labelledby="versions-title" data-testid="versions">
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">Published</th>
                  <th scope="col">By</th>
                  <th scope="col">Rules</th>
                  <th scope="col">Hash</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {versions.map((v) => (
                  <tr key={v.version} data-version={v.version} class={v.version === active ? "current" : undefined}>
                    <td data-label="Version">v{v.version}</td>
                    <td data-label="Published">
                      <When iso={v.created_at} />
                    </td>
                    <td data-label="By">{v.published_by === null ? "built in" : who(v.published_by)}</td>
                    <td data-label="Rules">{v.rules}</td>
                    <td class="mono" data-label="Hash" title={v.hash}>
                      {v.hash.slice(0, 12)}…
                    </td>
                    <td class="row-actions">
                      {v.version === active ? (
                        <span class="badge active">active</span>
                      ) : (
                        canRestore && (
                          <ConfirmButton
                            label="Restore"
                            title={`Restore version ${v.version}?`}
                            body={<p>Its document is published again as a new version, after your saved tests pass under it. New decisions then use it.</p>}
                            confirm="Restore"
                            disabled={busy}
                            onConfirm={() => void restore(v.version)}
                          />
                        )
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {next && (
            <button type="button" onClick={() => void load(next)} disabled={loading}>
              Show older versions
            </button>
          )}
          {versions.length > 1 && (
            <div class="diff-choice">
              {choice("From", from, (v) => setPair({ ...pair, from: v }))}
              {choice("To", to, (v) => setPair({ ...pair, to: v }))}
              <button type="button" onClick={compare} disabled={busy}>
                Compare
              </button>
            </div>
          )}
          {diff && (
            <figure class="diff">
              <figcaption>
                v{diff.from} → v{diff.to}: {diff.lines.filter((l) => l.op === "add").length} lines added, {diff.lines.filter((l) => l.op === "del").length} removed
              </figcaption>
              <RuleChanges diff={diff.rules} />
              <pre class="json diff" tabIndex={0} data-testid="policy-diff">
                {diff.lines.map((l, i) => (
                  <span key={i} class={l.op}>
                    {MARK[l.op] + l.text}
                  </span>
                ))}
              </pre>
            </figure>
          )}
        </>
      )}
    </section>
  );
}

/** The rule-level summary of a diff: rules added, removed, changed, the order, the default. */
function RuleChanges({ diff }: { diff: PolicyDiff }) {
  const ids = (label: string, list: string[]) =>
    list.length > 0 && (
      <li>
        {label}:{" "}
        {list.map((id, i) => (
          <span key={id}>
            {i > 0 && ", "}
            <code>{id}</code>
          </span>
        ))}
      </li>
    );
  return (
    <ul class="rule-changes" data-testid="rule-changes">
      {diff.same && <li>The same rules in the same order, and the same default.</li>}
      {ids("Rules added", diff.added)}
      {ids("Rules removed", diff.removed)}
      {ids("Rules changed", diff.changed)}
      {diff.reordered && <li>Rules both have come in another order: the first match decides.</li>}
      {diff.default && (
        <li>
          Default: {diff.default.before.effect} (<code>{diff.default.before.reason}</code>) → {diff.default.after.effect} (<code>{diff.default.after.reason}</code>)
        </li>
      )}
    </ul>
  );
}
