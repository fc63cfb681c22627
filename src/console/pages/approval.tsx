// /console/approvals/{id} (the approval email's link): one request held for people (docs/api.md,
// "Approvals"). The exact input from the signed protect receipt, whose content hash (the action
// hash) is recomputed here before anyone votes on it; who asked, the rule and its terms, a live
// countdown; Approve / Deny with an optional comment for the roles the terms name, sending the
// action hash shown; the timeline of signed receipts, and the whole bundle verified in the browser.
import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, ApiError } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { amountOf, duration } from "../app/approval-text.ts";
import { Countdown, StatusBadge, useKeyNames, type ApprovalDetail, type KeyName } from "../app/approvals.tsx";
import { useMemberNames } from "../app/names.ts";
import { BASE, Link } from "../app/router.tsx";
import { announce, ConfirmButton, ErrorNotice, Field, Loading, Notice, PageTitle, useLoad, When } from "../app/ui.tsx";
import { verifyApprovalBundleInBrowser, type ApprovalBundleChecks, type BundleVerification, type ProofChecks } from "../app/verify.ts";
import { contentHash } from "../../crypto/canonical.ts";
import type { ReceiptView } from "../../receipts/store.ts";

const VOTE_ROUTE = "POST /customer/approvals/:approval_id/votes";

export function ApprovalPage({ id, session, onChanged }: { id: string; session: Session; onChanged: () => void }) {
  const one = useLoad(() => api<ApprovalDetail>("GET", `/customer/approvals/${encodeURIComponent(id)}`), [id]);
  const who = useMemberNames(session.account.member_id);
  const keyName = useKeyNames();
  const approval = one.data;
  const protect = approval?.receipts.find((r) => r.receipt_id === approval.protect_receipt_id);
  const bound = useBoundHash(protect, approval?.action_hash);

  // A pending approval expires on time (the service's sweeper): show it when it does.
  const expiresAt = approval?.status === "pending" ? Date.parse(approval.expires_at) : NaN;
  useEffect(() => {
    if (Number.isNaN(expiresAt)) return;
    const timer = setTimeout(one.reload, Math.max(0, expiresAt - Date.now()) + 2000);
    return () => clearTimeout(timer);
  }, [expiresAt]);

  const reload = () => {
    one.reload();
    onChanged();
  };

  return (
    <section>
      <p>
        <Link href={`${BASE}/approvals`}>← All approvals</Link>
      </p>
      <PageTitle text="Approval">
        Approval <span class="mono small-title">{id}</span>
      </PageTitle>
      <ErrorNotice error={one.error} />
      {one.loading && !approval && <Loading what="the approval" />}
      {approval && protect && (
        <>
          <p class="approval-state">
            <StatusBadge status={approval.status} /> <StateLine approval={approval} />{" "}
            <button type="button" class="link" onClick={reload} disabled={one.loading}>
              Refresh
            </button>
          </p>
          <GatewayPanel protect={protect} who={who} />
          <RequestPanel approval={approval} bound={bound} />
          <TermsPanel approval={approval} keyName={keyName(approval.key_id)} who={who} />
          <VotePanel approval={approval} session={session} bound={bound} keyName={keyName(approval.key_id)} asker={askerOf(protect)} onVoted={reload} />
          <Timeline approval={approval} who={who} keyName={keyName} />
          <BundlePanel approval={approval} who={who} />
        </>
      )}
    </section>
  );
}

/** Whether the input shown is what the action hash covers: the protect receipt's payload, hashed here (RFC 8785, SHA-256). */
function useBoundHash(protect: ReceiptView | undefined, actionHash: string | undefined): boolean | undefined {
  const [bound, setBound] = useState<boolean | undefined>(undefined);
  useEffect(() => {
    let live = true;
    setBound(undefined);
    if (!protect || !actionHash) return;
    contentHash(protect.payload).then(
      (hash) => live && setBound(hash === actionHash && protect.content_hash === actionHash),
      () => live && setBound(false),
    );
    return () => {
      live = false;
    };
  }, [protect?.receipt_id, actionHash]);
  return bound;
}

function StateLine({ approval }: { approval: ApprovalDetail }) {
  const approves = approval.votes.filter((v) => v.vote === "approve").length;
  if (approval.status === "pending") {
    return (
      <span>
        {approves} of {approval.quorum} approval{approval.quorum === 1 ? "" : "s"} so far; expires <When iso={approval.expires_at} /> (<Countdown until={approval.expires_at} over="expiring now" />
        ): then it counts as denied.
      </span>
    );
  }
  if (approval.status === "approved") {
    return (
      <span>
        Approved <When iso={approval.decided_at} />: the bot may execute it once, before <When iso={approval.execute_before} />
        {approval.execute_before && (
          <>
            {" "}
            (<Countdown until={approval.execute_before} over="too late to execute" />)
          </>
        )}
        .
      </span>
    );
  }
  const said = { denied: "Denied", expired: "Expired without enough approvals (a denial)", cancelled: "Withdrawn by the bot", executed: "Approved and executed" }[approval.status];
  return (
    <span>
      {said} <When iso={approval.decided_at} />.
    </span>
  );
}

/** Through a remote MCP gateway: the member whose agent asked (the signed protect receipt names them); else undefined. */
function askerOf(protect: ReceiptView | undefined): string | undefined {
  return (protect?.payload as { principal?: { member_id?: string } } | undefined)?.principal?.member_id;
}

/** Through a remote MCP gateway: the person, the agent and the gateway the signed protect receipt names. */
function GatewayPanel({ protect, who }: { protect: ReceiptView | undefined; who: (memberId: string | null) => string }) {
  const principal = (protect?.payload as { principal?: { member_id?: string; role?: string; client_id?: string; gateway?: string; gateway_id?: string } } | undefined)?.principal;
  if (!principal?.gateway_id) return null;
  return (
    <section class="panel" aria-labelledby="asked-by" data-testid="approval-gateway">
      <h2 id="asked-by">Who asked, through what</h2>
      <dl class="facts">
        <dt>Person</dt>
        <dd>
          {who(principal.member_id ?? null)} <span class="small">({principal.role})</span>
        </dd>
        <dt>Agent</dt>
        <dd class="mono wrap">{principal.client_id}</dd>
        <dt>MCP gateway</dt>
        <dd>
          <span class="mono">{principal.gateway}</span> <span class="small mono">{principal.gateway_id}</span>
        </dd>
      </dl>
    </section>
  );
}

/** The exact request, from the signed protect receipt. */
function RequestPanel({ approval, bound }: { approval: ApprovalDetail; bound: boolean | undefined }) {
  const input = approval.input;
  const context = Object.entries(input.context ?? {});
  return (
    <section class="panel" aria-labelledby="request-title">
      <h2 id="request-title">The request</h2>
      <dl class="facts" data-testid="approval-input">
        <dt>Action</dt>
        <dd class="mono">{input.action}</dd>
        <dt>Amount</dt>
        <dd class="mono" data-testid="approval-amount">
          {amountOf(input) ?? "—"}
        </dd>
        <dt>Resource</dt>
        <dd class="mono wrap">{input.resource ?? "—"}</dd>
        {context.map(([k, v]) => (
          <Fragment key={k}>
            <dt>
              context.<span class="mono">{k}</span>
            </dt>
            <dd class="mono wrap">{JSON.stringify(v)}</dd>
          </Fragment>
        ))}
      </dl>
      <p class="small">Exactly as the bot sent it, from the signed protect receipt:</p>
      <pre class="json" tabIndex={0} aria-label="The request as signed" data-testid="approval-input-json">
        {JSON.stringify(input, null, 2)}
      </pre>
      <p class="small">
        Action hash (the protect receipt's content hash): <span class="mono wrap" data-testid="action-hash">{approval.action_hash}</span>
      </p>
      {bound === true && (
        <p class="small" data-testid="hash-checked">
          <span aria-hidden="true">✓</span> Checked in this browser: the receipt above hashes to this action hash, and a vote here is a vote on exactly it.
        </p>
      )}
      {bound === false && (
        <div class="notice error" role="alert" data-testid="hash-mismatch">
          <p>The request shown does not hash to the action hash the service names: do not vote on it. Load the page again, and tell your administrator if it stays.</p>
        </div>
      )}
    </section>
  );
}

function TermsPanel({ approval, keyName, who }: { approval: ApprovalDetail; keyName: KeyName | undefined; who: (id: string | null) => string }) {
  const t = approval.terms;
  return (
    <section class="panel" aria-labelledby="terms-title">
      <h2 id="terms-title">Who asked, the rule and its terms</h2>
      <dl class="facts">
        <dt>Asked by</dt>
        <dd data-testid="approval-key">
          {keyName ? (
            <>
              the key <strong>{keyName.label}</strong> <span class="mono small">{approval.key_id}</span>, made by {who(keyName.created_by)}
            </>
          ) : (
            <>
              the key <span class="mono">{approval.key_id}</span>
            </>
          )}
          , <When iso={approval.created_at} />
        </dd>
        <dt>Rule</dt>
        <dd>
          <span class="mono">{approval.rule}</span>: {approval.reason}
        </dd>
        <dt>Policy</dt>
        <dd class="mono">
          {approval.policy.policy_id} v{approval.policy.version ?? "—"}
        </dd>
        <dt>Quorum</dt>
        <dd data-testid="terms-quorum">
          {t.quorum} {t.quorum === 1 ? "person" : "distinct people"} must approve; one deny denies
        </dd>
        <dt>Who may vote</dt>
        <dd data-testid="terms-roles">{t.roles.join(", ")}</dd>
        <dt>Expires in</dt>
        <dd>
          {duration(t.expires_in)} after the request (<When iso={approval.expires_at} />)
        </dd>
        <dt>Execute within</dt>
        <dd>{duration(t.execute_within)} of the approval, once</dd>
      </dl>
    </section>
  );
}

// A refusal of the vote said for people, with what to do; the service's own message follows.
const REFUSALS: Record<string, string> = {
  self_approval: "You cannot approve this request: you made the key that asked. Someone else must decide.",
  already_voted: "You have already voted on this request: each member votes once.",
  action_changed: "The request is not the one this page showed when you voted. It has been loaded again: read it again before you vote.",
  not_pending: "This request no longer waits for a decision: it was decided, expired or withdrawn meanwhile. The page shows where it stands now.",
  forbidden_role: "The rule's terms do not let your role vote on this request.",
};

function VotePanel(props: { approval: ApprovalDetail; session: Session; bound: boolean | undefined; keyName: KeyName | undefined; asker?: string; onVoted: () => void }) {
  const { approval, session, bound, keyName, asker, onVoted } = props;
  const me = session.account.member_id;
  const role = session.account.role;
  const [comment, setComment] = useState("");
  const [state, setState] = useState<{ busy: boolean; error?: unknown }>({ busy: false });
  const mine = approval.votes.find((v) => v.member_id === me);
  const mayVote = session.can(VOTE_ROUTE) && (approval.terms.roles as string[]).includes(role);
  // Through a remote gateway the asker is the person whose agent asked, not the gateway key's maker.
  const ownKey = (asker ?? keyName?.created_by) === me;
  const selfVote = useSelfVote(ownKey && mayVote && approval.status === "pending" && !mine);

  const vote = async (choice: "approve" | "deny") => {
    setState({ busy: true });
    try {
      const text = comment.trim();
      // The action hash shown on this page (checked against the receipt above), nothing fresher.
      const after = await api<{ status: string }>("POST", `/customer/approvals/${encodeURIComponent(approval.approval_id)}/votes`, {
        json: { vote: choice, action_hash: approval.action_hash, ...(text ? { comment: text } : {}) },
      });
      setState({ busy: false });
      setComment("");
      announce(`You ${choice === "approve" ? "approved" : "denied"} the request: it is now ${after.status}.`);
    } catch (error) {
      setState({ busy: false, error });
    }
    // Whatever the answer, show where the approval stands now.
    onVoted();
  };

  if (approval.status !== "pending" && !state.error) return null;
  return (
    <section class="panel" aria-labelledby="vote-title">
      <h2 id="vote-title">Your vote</h2>
      {state.error !== undefined && <VoteRefusal error={state.error} />}
      {approval.status !== "pending" ? null : mine ? (
        <p data-testid="my-vote">
          You voted <strong>{mine.vote}</strong> <When iso={mine.at} />.
        </p>
      ) : !mayVote ? (
        <p data-testid="vote-not-allowed">
          The rule lets {approval.terms.roles.join(", ")} vote; your role here is <strong>{role}</strong>, so there is no vote for you to cast.
        </p>
      ) : ownKey && selfVote === false ? (
        <p data-testid="own-key-no-vote">
          You made the key that asked, so your vote would not count: someone else with the role {approval.terms.roles.join(", ")} decides. There are no Approve and Deny
          buttons for you here; the others were told by email.
        </p>
      ) : ownKey && selfVote === undefined ? (
        <Loading what="whether you may vote" />
      ) : (
        <>
          {ownKey && (
            <Notice kind="warning">
              <p data-testid="own-key">
                You made the key that asked. You may still decide: you are this tenant's only member, and its owner allowed self-approval (Members › Tenant settings). Your vote says so.
              </p>
            </Notice>
          )}
          <Field
            label="Comment (optional)"
            multiline
            rows={2}
            maxLength={1000}
            value={comment}
            onInput={(e) => setComment((e.currentTarget as HTMLTextAreaElement).value)}
            hint="Stored by warden with your vote; the vote's signed receipt holds its SHA-256, not the text."
          />
          <div class="actions">
            <ConfirmButton
              label={state.busy ? "Voting…" : "Approve"}
              primary
              title="Approve this request?"
              body={<VoteSummary approval={approval} choice="approve" />}
              confirm="Approve request"
              disabled={state.busy || bound !== true}
              onConfirm={() => void vote("approve")}
            />
            <ConfirmButton
              label="Deny"
              danger
              title="Deny this request?"
              body={<VoteSummary approval={approval} choice="deny" />}
              confirm="Deny request"
              disabled={state.busy || bound !== true}
              onConfirm={() => void vote("deny")}
            />
          </div>
        </>
      )}
    </section>
  );
}

/**
 * Whether the key's creator may vote on its request (approval_votes_guard(): only the tenant's one
 * member, its owner, with allow_self_approval on); undefined while reading, and when not asked.
 */
function useSelfVote(ask: boolean): boolean | undefined {
  const [answer, setAnswer] = useState<boolean | undefined>(undefined);
  useEffect(() => {
    if (!ask) return setAnswer(undefined);
    let live = true;
    Promise.all([api<{ settings: { allow_self_approval?: boolean } }>("GET", "/customer/settings"), api<{ members: unknown[] }>("GET", "/customer/members")]).then(
      ([settings, members]) => live && setAnswer(!!settings.settings.allow_self_approval && members.members.length === 1),
      // Unknown: show the buttons; the service still refuses a vote it must (self_approval), and the page says why.
      () => live && setAnswer(true),
    );
    return () => {
      live = false;
    };
  }, [ask]);
  return answer;
}

function VoteSummary({ approval, choice }: { approval: ApprovalDetail; choice: "approve" | "deny" }) {
  const amount = amountOf(approval.input);
  const what = (
    <>
      <span class="mono">{approval.input.action}</span>
      {amount ? <> for {amount}</> : null}
      {approval.input.resource ? (
        <>
          {" "}
          on <span class="mono">{approval.input.resource}</span>
        </>
      ) : null}
    </>
  );
  if (choice === "deny") return <p>You deny {what}. One deny decides: the bot cannot execute it. Your vote is a signed receipt in the log.</p>;
  const left = approval.quorum - approval.votes.filter((v) => v.vote === "approve").length;
  return (
    <p>
      You approve {what}.{" "}
      {left <= 1 ? `This makes the quorum: the bot may then execute it once, within ${duration(approval.terms.execute_within)}.` : `${left - 1} more approval(s) will still be needed.`} Your
      vote is a signed receipt in the log.
    </p>
  );
}

function VoteRefusal({ error }: { error: unknown }) {
  const code = error instanceof ApiError ? error.code : undefined;
  const said = code ? REFUSALS[code] : undefined;
  if (!said) return <ErrorNotice error={error} />;
  const required = error instanceof ApiError && typeof error.body.required_role === "string" ? error.body.required_role : undefined;
  return (
    <div class="notice error" role="alert" data-testid="vote-refusal" data-code={code}>
      <p>
        <strong>{said}</strong>
        {required ? ` (at least ${required})` : ""}
      </p>
      <p class="small">
        The service said: {(error as Error).message}
        {error instanceof ApiError && error.requestId ? ` (request id ${error.requestId})` : ""}
      </p>
    </div>
  );
}

/** Each signed step, in log order, linked to its receipt page. */
function Timeline({ approval, who, keyName }: { approval: ApprovalDetail; who: (id: string | null) => string; keyName: (id: string) => KeyName | undefined }) {
  const keyText = (id: string | null) => (id === null ? "—" : (keyName(id)?.label ?? id));
  const describe = (r: ReceiptView) => {
    if (r.kind === "protect") return <>The key {keyText(r.key_id)} asked; the rule held it for approval ({r.reasons.join(", ")}).</>;
    if (r.kind === "vote") {
      const p = r.payload;
      return (
        <>
          {capitalized(who(p.member_id))} ({p.role}) voted <strong>{p.vote}</strong>
          {p.mfa ? ", with a second factor" : ""}
          {p.comment_hash ? ", with a comment" : ""}
          {p.self_approval ? ", approving their own key's request (allowed by the tenant's settings)" : ""}.
        </>
      );
    }
    if (r.kind === "approval") {
      const o = r.payload.outcome;
      return (
        <>
          Outcome: <strong>{o.status}</strong>, {o.votes.length} vote{o.votes.length === 1 ? "" : "s"} counted. {r.decision === "ALLOWED" ? "This receipt is what the bot executes." : ""}
        </>
      );
    }
    if (r.kind === "execute") return <>The key {keyText(r.key_id)} executed the approved request.</>;
    return <>{r.kind}</>;
  };
  return (
    <section class="panel" aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline</h2>
      <p class="small">Every step is a signed receipt in your log. Open one to see its payload and verify it on its own.</p>
      <ol class="timeline" data-testid="timeline">
        {approval.receipts.map((r) => (
          <li key={r.receipt_id} data-kind={r.kind}>
            <div class="timeline-head">
              <span class="mono">{r.kind}</span> {r.decision && <span class={`badge ${r.decision.toLowerCase()}`}>{r.decision}</span>} <When iso={r.timestamp} />
            </div>
            <div>{describe(r)}</div>
            <Link href={`${BASE}/receipts/${r.receipt_id}`} class="mono small">
              {r.receipt_id} (seq {r.seq})
            </Link>
          </li>
        ))}
      </ol>
    </section>
  );
}

// "you" starts a sentence; an email address stays as it is.
const capitalized = (name: string) => (name === "you" ? "You" : name);

const CHECKS: [keyof ProofChecks, string][] = [
  ["content_hash", "hash"],
  ["signature", "signature"],
  ["chain_hash", "chain"],
  ["inclusion", "in the tree"],
  ["checkpoint", "checkpoint"],
];

const APPROVAL_CHECKS: [keyof ApprovalBundleChecks, string][] = [
  ["receipts_in_log", "Every receipt is signed and in your log under the checkpoint"],
  ["protect", "The request: one protect receipt, held (DENIED) by a require_approval rule that carries the terms"],
  ["votes", "The votes: on this approval and this exact action hash, by distinct people (one vote per account, whatever their memberships) of roles the terms name, before the expiry and the outcome"],
  ["outcome", "The outcome: names exactly those votes, which (or the clock) justify its status; ALLOWED only when approved"],
  ["execute", "The execute, if any: of the approved outcome, within the execute window, for the same input"],
];

function BundlePanel({ approval, who }: { approval: ApprovalDetail; who: (id: string | null) => string }) {
  const approvalId = approval.approval_id;
  const decided = approval.status !== "pending";
  const [result, setResult] = useState<{ busy: boolean; outcome?: BundleVerification; error?: unknown }>({ busy: false });
  const verify = async () => {
    setResult({ busy: true });
    try {
      const outcome = await verifyApprovalBundleInBrowser(approvalId, decided);
      setResult({ busy: false, outcome });
      announce(outcome.verified ? "Bundle verified in your browser: every receipt passed every check." : "Bundle not verified: see which receipt failed which check.");
    } catch (error) {
      setResult({ busy: false, error });
    }
  };
  const outcome = result.outcome;
  return (
    <section class="panel" aria-labelledby="bundle-title">
      <h2 id="bundle-title">Proof</h2>
      <p>
        Checks every receipt of this approval here, in your browser, with the public keys at <code>/.well-known/jwks.json</code>: its hash, its signature, its chain hash,
        and its inclusion in your log under one signed checkpoint; once decided, that the votes of distinct people (one per account) whose roles the terms name made the outcome, on this
        exact action, in time. <code>warden verify --proof</code> checks the same bundle offline (
        <code class="wrap">GET /customer/approvals/{approvalId}/bundle</code>).
      </p>
      <button type="button" class="primary" onClick={verify} disabled={result.busy}>
        {result.busy ? "Verifying…" : "Verify the bundle in this browser"}
      </button>
      <ErrorNotice error={result.error} />
      {outcome && (
        <div class={`notice ${outcome.verified ? "success" : "error"}`} data-testid="bundle-result" data-verified={String(outcome.verified)}>
          <p>
            <strong>
              {!outcome.verified
                ? "Not verified: a check failed."
                : outcome.approval
                  ? `Verified: all ${outcome.receipts.length} receipts passed every check, and they prove the outcome (${outcome.approval.status}).`
                  : `Verified: all ${outcome.receipts.length} receipts passed every check.`}
            </strong>
          </p>
          <div class="table-wrap">
            <table class="stack">
              <thead>
                <tr>
                  <th scope="col">Receipt</th>
                  {CHECKS.map(([key, label]) => (
                    <th key={key} scope="col">
                      {label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {outcome.receipts.map((r) => (
                  <tr key={r.receipt_id} data-receipt-id={r.receipt_id} data-verified={String(r.verified)}>
                    <th scope="row">
                      <span class="mono">{r.kind}</span> <span class="small">seq {r.seq}</span>
                    </th>
                    {CHECKS.map(([key, label]) => (
                      <td key={key} data-label={label} class={r.checks[key] ? "pass" : "fail"}>
                        <span aria-hidden="true">{r.checks[key] ? "✓" : "✗"}</span> {r.checks[key] ? "passed" : "failed"}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {outcome.approval ? (
            <>
              <ul class="checks" data-testid="bundle-approval-checks">
                {APPROVAL_CHECKS.map(([key, text]) => (
                  <li key={key} class={outcome.approval!.checks[key] ? "pass" : "fail"} data-check={key} data-passed={String(outcome.approval!.checks[key])}>
                    <span aria-hidden="true">{outcome.approval!.checks[key] ? "✓" : "✗"}</span> {text}: {outcome.approval!.checks[key] ? "passed" : "failed"}
                  </li>
                ))}
              </ul>
              {outcome.approval.status === "approved" && (
                <p data-testid="bundle-approvers">Approved by {outcome.approval.approvers.map((m) => who(m)).join(", ")}.</p>
              )}
            </>
          ) : (
            <p class="small" data-testid="bundle-pending">
              The approval is pending: no outcome is in the log yet, so each receipt is checked, and the votes and outcome once it is decided.
            </p>
          )}
          <p class="small">
            Checked against the tree of {outcome.tree_size} receipts with root <span class="mono wrap">{outcome.root_hash}</span>.
          </p>
        </div>
      )}
    </section>
  );
}
