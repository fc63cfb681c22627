// /console/receipts: the log, newest first, page by page; /console/receipts/{id}: one receipt with
// its payload and a "verify" that runs in the browser (../app/verify.ts).
import { useState } from "preact/hooks";
import { api, download } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { loadCatalog, planAllows } from "../app/catalog.ts";
import { BASE, Link } from "../app/router.tsx";
import { announce, ErrorNotice, Loading, PageTitle, Pager, saveFile, useCursorPages, useLoad, When } from "../app/ui.tsx";
import { verifyInBrowser, type BrowserVerification, type ProofChecks } from "../app/verify.ts";
import type { ReceiptView } from "../../receipts/store.ts";

// The shape GET /customer/receipts returns: the server's own type, imported for its type only.
type Receipt = ReceiptView;

const PAGE_SIZE = 20;

/** What a row of the log is about: the action asked, the audit event, or the approval a step belongs to. */
function actionOf(r: Receipt): string {
  if (r.kind === "event") return r.payload.event;
  if (r.kind === "vote") return `vote on ${r.payload.approval_id}`;
  if (r.kind === "approval") return `approval ${r.payload.outcome.approval_id}`;
  return r.payload.input?.action ?? "—";
}

export function ReceiptsPage({ session }: { session: Session }) {
  const pages = useCursorPages();
  const cursor = pages.cursor;
  const page = useLoad(
    () => api<{ receipts: Receipt[]; next_cursor: string | null }>("GET", `/customer/receipts?limit=${PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`),
    [cursor],
  );
  const receipts = page.data?.receipts ?? [];
  const number = pages.number;
  return (
    <section>
      <PageTitle text="Receipts" />
      <p>Every protect and execute decision, and every audit event, signed and kept in your append-only log. Open one to check it in this browser.</p>
      <div class="panel-head">
        <h2 id="receipt-list">{number === 1 ? "Newest" : `Page ${number}`}</h2>
        <button type="button" onClick={() => (number === 1 ? page.reload() : pages.first())} disabled={page.loading}>
          {number === 1 ? "Refresh" : "Back to newest"}
        </button>
      </div>
      <ErrorNotice error={page.error} />
      {page.loading && !page.data ? (
        <Loading what="receipts" />
      ) : receipts.length === 0 ? (
        <p data-testid="no-receipts">No receipts yet. Call <code>POST /v1/protect</code> with one of your API keys and they appear here.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack" aria-labelledby="receipt-list" data-testid="receipts-table">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Kind</th>
                <th scope="col">Action</th>
                <th scope="col">Decision</th>
                <th scope="col">Receipt</th>
              </tr>
            </thead>
            <tbody>
              {receipts.map((r) => (
                <tr key={r.receipt_id}>
                  <td data-label="Time">
                    <When iso={r.timestamp} />
                  </td>
                  <td data-label="Kind">{r.kind}</td>
                  <td class="mono" data-label="Action">{actionOf(r)}</td>
                  <td data-label="Decision">{r.decision === null ? "—" : <span class={`badge ${r.decision.toLowerCase()}`}>{r.decision}</span>}</td>
                  <td data-label="Receipt">
                    <Link href={`${BASE}/receipts/${r.receipt_id}`} class="mono">
                      {r.receipt_id}
                    </Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager label="Receipt pages" pages={pages} next={page.data?.next_cursor} loading={page.loading} />
      <ReceiptExport plan={session.account.plan} />
    </section>
  );
}

/** Every receipt as one NDJSON file (GET /customer/receipts/export), on a plan with receipt_export. */
function ReceiptExport({ plan }: { plan: string }) {
  const catalog = useLoad(loadCatalog);
  const [state, setState] = useState<{ busy: boolean; error?: unknown }>({ busy: false });
  const feature = catalog.data?.features.find((f) => f.feature === "receipt_export");
  const allowed = !!catalog.data && planAllows(catalog.data, plan, "receipt_export");
  const exportAll = async () => {
    setState({ busy: true });
    try {
      const file = await download("/customer/receipts/export");
      saveFile(file.name ?? "receipts.ndjson", file.body);
      setState({ busy: false });
      announce("Receipts downloaded: one JSON receipt a line, oldest first.");
    } catch (error) {
      setState({ busy: false, error });
    }
  };
  return (
    <section class="panel" aria-labelledby="export-title">
      <h2 id="export-title">Export</h2>
      <p>Every receipt in your log as one file, oldest first: one JSON receipt a line (NDJSON), the shape of a single receipt here.</p>
      <div class="actions with-hint">
        <button type="button" onClick={exportAll} disabled={!allowed || state.busy} aria-describedby={allowed ? undefined : "export-plan"}>
          {state.busy ? "Downloading…" : "Download all (NDJSON)"}
        </button>
        {catalog.data && !allowed && (
          <p class="hint" id="export-plan" data-testid="export-plan">
            Export needs the <strong>{feature?.required_plan ?? "pro"}</strong> plan. <Link href={`${BASE}/plan`}>Plans and upgrades</Link>
          </p>
        )}
      </div>
      <ErrorNotice error={catalog.error ?? state.error} />
    </section>
  );
}

const CHECK_NAMES: [keyof BrowserVerification["checks"], string][] = [
  ["content_hash", "Content hash: SHA-256 of the payload's canonical JSON (RFC 8785)"],
  ["signature", "Signature: Ed25519 over the receipt, by a key in the JWKS"],
  ["chain_hash", "Chain hash: links the receipt to the one before it"],
  ["inclusion", "Inclusion proof: the receipt is in the log's Merkle tree (RFC 9162)"],
  ["checkpoint", "Checkpoint: the tree head is signed by warden for your account"],
  ["decision", "Decision: made again in this browser from the payload, under the policy version it names"],
];

export function ReceiptPage({ id }: { id: string }) {
  const one = useLoad(() => api<{ receipt: Receipt }>("GET", `/customer/receipts/${encodeURIComponent(id)}`), [id]);
  const [result, setResult] = useState<{ busy: boolean; outcome?: BrowserVerification; error?: unknown }>({ busy: false });
  const receipt = one.data?.receipt;

  const verify = async () => {
    if (!receipt) return;
    setResult({ busy: true });
    try {
      const outcome = await verifyInBrowser(receipt);
      setResult({ busy: false, outcome });
      announce(outcome.verified ? "Receipt verified in your browser: every check passed." : "Verification failed: see which check did not pass.");
    } catch (error) {
      setResult({ busy: false, error });
    }
  };

  return (
    <section>
      <p>
        <Link href={`${BASE}/receipts`}>← All receipts</Link>
      </p>
      <PageTitle text="Receipt">
        Receipt <span class="mono small-title">{id}</span>
      </PageTitle>
      <ErrorNotice error={one.error} />
      {one.loading && !receipt && <Loading what="the receipt" />}
      {receipt && (
        <>
          <dl class="facts">
            <dt>Decision</dt>
            <dd>
              {receipt.kind === "event" ? (
                <>none: an audit event, <span class="mono">{receipt.payload.event}</span></>
              ) : receipt.kind === "vote" ? (
                <>
                  none: a vote ({receipt.payload.vote}) on approval <ApprovalLink id={receipt.payload.approval_id} />
                </>
              ) : receipt.kind === "approval" ? (
                <>
                  <span class={`badge ${receipt.decision.toLowerCase()}`}>{receipt.decision}</span> approval <ApprovalLink id={receipt.payload.outcome.approval_id} />{" "}
                  {receipt.payload.outcome.status}
                </>
              ) : (
                <>
                  <span class={`badge ${receipt.decision.toLowerCase()}`}>{receipt.decision}</span> {receipt.reasons.join(", ")}
                </>
              )}
            </dd>
            <dt>Kind</dt>
            <dd>{receipt.kind}</dd>
            <dt>Time</dt>
            <dd>
              <When iso={receipt.timestamp} /> <span class="small mono">{receipt.timestamp}</span>
            </dd>
            <dt>Position in log</dt>
            <dd>seq {receipt.seq}</dd>
            <dt>Policy</dt>
            <dd class="mono">{(receipt.kind === "protect" || receipt.kind === "execute") && receipt.payload.policy ? `${receipt.payload.policy.policy_id} v${receipt.payload.policy.version}` : "—"}</dd>
            <dt>API key</dt>
            <dd class="mono">{receipt.key_id ?? "—"}</dd>
            {receipt.protect_receipt_id && (
              <>
                <dt>{receipt.kind === "execute" ? "Executes" : "Request"}</dt>
                <dd>
                  <Link href={`${BASE}/receipts/${receipt.protect_receipt_id}`} class="mono">
                    {receipt.protect_receipt_id}
                  </Link>
                </dd>
              </>
            )}
            <dt>Request id</dt>
            <dd class="mono">{receipt.request_id}</dd>
            <dt>Content hash</dt>
            <dd class="mono wrap">{receipt.content_hash}</dd>
            <dt>Chain hash</dt>
            <dd class="mono wrap">{receipt.chain_hash}</dd>
          </dl>
          <section class="panel" aria-labelledby="verify-title">
            <h2 id="verify-title">Verify</h2>
            <p>Checks the receipt here, in your browser, with the public keys at <code>/.well-known/jwks.json</code>: nothing is taken on the server's word.</p>
            <button type="button" class="primary" onClick={verify} disabled={result.busy}>
              {result.busy ? "Verifying…" : "Verify in this browser"}
            </button>
            <ErrorNotice error={result.error} />
            {result.outcome && <VerifyResult outcome={result.outcome} />}
          </section>
          <section class="panel" aria-labelledby="payload-title">
            <h2 id="payload-title">Payload</h2>
            <p class="small">The exact content that the content hash covers.</p>
            <pre class="json" tabIndex={0} aria-labelledby="payload-title">
              {JSON.stringify(receipt.payload, null, 2)}
            </pre>
            <details>
              <summary>Signature (compact JWS)</summary>
              <pre class="json wrap">{receipt.signature}</pre>
            </details>
          </section>
        </>
      )}
    </section>
  );
}

function ApprovalLink({ id }: { id: string }) {
  return (
    <Link href={`${BASE}/approvals/${id}`} class="mono">
      {id}
    </Link>
  );
}

function VerifyResult({ outcome }: { outcome: BrowserVerification }) {
  return (
    <div class={`notice ${outcome.verified ? "success" : "error"}`} data-testid="verify-result" data-verified={String(outcome.verified)}>
      <p>
        <strong>{outcome.verified ? "Verified: every check passed." : "Not verified: a check failed."}</strong>
      </p>
      <ul class="checks">
        {CHECK_NAMES.filter(([key]) => outcome.checks[key] !== undefined).map(([key, text]) => (
          <li key={key} class={outcome.checks[key] ? "pass" : "fail"}>
            <span aria-hidden="true">{outcome.checks[key] ? "✓" : "✗"}</span> {text}: {outcome.checks[key] ? "passed" : "failed"}
          </li>
        ))}
      </ul>
      <p class="small">
        Checked against the tree of {outcome.tree_size} receipts with root <span class="mono wrap">{outcome.root_hash}</span>.
      </p>
    </div>
  );
}
