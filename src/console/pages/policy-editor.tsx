// The policy editor (plans with custom_policy): the draft document and the test cases side by
// side, each in a code editor that checks it against the service's schema as you type, completes
// names and values, and marks its problems at their line, also listed below it; "run tests",
// "save tests", an impact preview of the draft on the tenant's stored decisions, and "publish"
// once that preview is of the text in the editor.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../app/api.ts";
import type { JsonEditor } from "../app/code-editor.ts";
import { lineRange } from "../app/json-lines.ts";
import { pretty } from "../app/policy-text.ts";
import { locateRefusal, parseField, type EditorField, type Problem } from "../app/problems.ts";
import { BASE, Link } from "../app/router.tsx";
import { announce, ErrorNotice, formatCount, Notice } from "../app/ui.tsx";

export interface Policy {
  policy_id: string;
  version: number;
  hash: string;
  document: unknown;
}

export interface TestResult {
  name: string;
  passed: boolean;
  decision: string;
  reason: string;
  rule: string | null;
  /** Present when a require_approval rule decided the case. */
  approval_required?: true;
}

/** What a case expects: the decision, and the reason, rule and approval where it names them. */
interface Expectation {
  decision: string;
  reason?: string;
  rule?: string | null;
  approval_required?: boolean;
}

/** A result as shown: with its case's expectation, when known, so a failure says what was wanted. */
export type ShownResult = TestResult & { expect?: Expectation };

/**
 * Each result with the expectation of the case it came from: results come in the order of the
 * cases that ran; a case whose name differs (another suite) lends none.
 */
export function withExpectations(results: TestResult[], cases: unknown): ShownResult[] {
  const list: unknown[] = Array.isArray(cases) ? cases : [];
  return results.map((r, i) => {
    const c = list[i] as { name?: unknown; expect?: Expectation } | undefined;
    return c?.name === r.name && c.expect ? { ...r, expect: c.expect } : r;
  });
}

/** A refused publish or restore's results, with the expectations of the saved suite that ran. */
export async function refusedResults(error: unknown): Promise<ShownResult[] | undefined> {
  const failed = failedTests(error);
  if (!failed) return undefined;
  const saved = await api<{ cases: unknown[] }>("GET", "/customer/policy/tests").catch(() => ({ cases: [] }));
  return withExpectations(failed, saved.cases);
}

interface Outcome {
  decision: string;
  reason: string;
}

interface Impact {
  evaluated: number;
  unchanged: number;
  changed: number;
  allowed_to_denied: number;
  denied_to_allowed: number;
  /** The same decision for another reason: not a flip. */
  reason_changed: number;
  /** Decisions a require_approval rule of the draft would have held for people, in all and per UTC day. */
  approval_required: number;
  approval_required_by_day: { day: string; count: number }[];
  examples: Example[];
}
type Example = { receipt_id: string; input: { action: string; resource?: string; amount?: number; currency?: string }; before: Outcome; after: Outcome; flipped: boolean };

/** One value of a result; in a failed case that expected another, the expected one under it. */
function Got({ got, expected }: { got: string; expected: string | undefined }) {
  return (
    <>
      {got}
      {expected !== undefined && expected !== got && (
        <span class="expected" data-testid="expected">
          expected {expected}
        </span>
      )}
    </>
  );
}

/** A result held for approval says so; a failed case that expected otherwise says what it expected. */
function Approval({ held, expected }: { held: boolean; expected: boolean | undefined }) {
  return (
    <>
      {held && (
        <span class="badge pending approval-required" data-testid="approval-required">
          approval required
        </span>
      )}
      {expected !== undefined && expected !== held && (
        <span class="expected" data-testid="expected">
          expected {expected ? "approval required" : "no approval"}
        </span>
      )}
    </>
  );
}

const ruleName = (rule: string | null | undefined) => (rule === undefined ? undefined : (rule ?? "default"));

/** A list of test results, failures first to the eye (a badge and the row's class) with what they expected. */
export function TestResults({ title, results }: { title: string; results: ShownResult[] }) {
  const failed = results.filter((r) => !r.passed).length;
  return (
    <div class="table-wrap">
      <table class="stack" data-testid="test-results" data-failed={failed}>
        <caption>
          {title}: {results.length - failed} of {results.length} pass
        </caption>
        <thead>
          <tr>
            <th scope="col">Test</th>
            <th scope="col">Result</th>
            <th scope="col">Decision</th>
            <th scope="col">Reason</th>
            <th scope="col">Rule</th>
          </tr>
        </thead>
        <tbody>
          {results.map((r, i) => {
            // Only a failure shows what was expected: in a pass, it is what the row shows.
            const want = r.passed ? undefined : r.expect;
            return (
              <tr key={i} class={r.passed ? undefined : "failed"} data-passed={String(r.passed)}>
                <td data-label="Test">{r.name}</td>
                <td data-label="Result">
                  <span class={`badge ${r.passed ? "allowed" : "denied"}`}>{r.passed ? "pass" : "fail"}</span>
                </td>
                <td data-label="Decision">
                  <Got got={r.decision} expected={want?.decision} />
                  <Approval held={r.approval_required === true} expected={want?.approval_required} />
                </td>
                <td class="mono" data-label="Reason">
                  <Got got={r.reason} expected={want?.reason} />
                </td>
                <td class="mono" data-label="Rule">
                  <Got got={ruleName(r.rule)!} expected={ruleName(want?.rule)} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The results a 422 policy_tests_failed carries, or undefined for any other error. */
export function failedTests(error: unknown): TestResult[] | undefined {
  return error instanceof ApiError && error.code === "policy_tests_failed" && Array.isArray(error.body.results) ? (error.body.results as TestResult[]) : undefined;
}

/** How the page moves to a problem, whichever editor shows the text. */
interface EditorHandle {
  reveal: (problem: Problem) => void;
}

type CodeEditorModule = typeof import("../app/code-editor.ts");

/**
 * One JSON text with its problems listed below it, each a button to its place. The code editor
 * (CodeMirror: the schema's checks and completion) is a chunk of its own; until it has loaded, or
 * if it cannot, a plain textarea holds the text, with its syntax errors and the service's refusals.
 */
function JsonArea(props: {
  field: EditorField;
  label: string;
  hint: string;
  text: string;
  /** Counts the times the page set the text itself (a discarded draft, saved tests): the editor then shows `text`. */
  reset: number;
  /** The textarea's problems (syntax, refusals); the code editor finds its own and reports them. */
  problems: Problem[];
  refused: Problem[];
  onInput: (text: string) => void;
  onProblems: (problems: Problem[] | undefined) => void;
  handle: { current: EditorHandle | null };
}) {
  const id = `policy-${props.field}`;
  const ids = { labelId: `${id}-label`, hintId: `${id}-hint`, problemsId: `${id}-problems` };
  const host = useRef<HTMLDivElement>(null);
  const area = useRef<HTMLTextAreaElement>(null);
  const [editor, setEditor] = useState<JsonEditor | null>(null);
  // The latest callbacks, for the editor made once.
  const latest = useRef(props);
  latest.current = props;

  useEffect(() => {
    let made: JsonEditor | undefined;
    let gone = false;
    import("../app/code-editor.ts")
      .then((module: CodeEditorModule) => {
        if (gone || !host.current) return;
        made = module.mountJsonEditor({
          parent: host.current,
          field: props.field,
          text: latest.current.text,
          ...ids,
          onChange: (text) => latest.current.onInput(text),
          onProblems: (problems) => latest.current.onProblems(problems),
        });
        setEditor(made);
      })
      // Without the chunk (a network failure), the textarea stays: the page still works.
      .catch(() => undefined);
    return () => {
      gone = true;
      made?.destroy();
      latest.current.onProblems(undefined);
    };
  }, []);
  // Only when the page sets the text: an edit's own text comes back here a render later, when the
  // editor may hold a newer one, which must not be replaced by it.
  useEffect(() => editor?.setText(props.text), [editor, props.reset]);
  useEffect(() => editor?.setRefused(props.refused), [editor, props.refused]);

  props.handle.current = editor ?? {
    reveal: (problem) => {
      const textarea = area.current;
      if (!textarea) return;
      textarea.focus();
      if (problem.line === undefined) return;
      const [start, end] = lineRange(textarea.value, problem.line);
      textarea.setSelectionRange(start, end);
      const lineHeight = parseFloat(getComputedStyle(textarea).lineHeight) || 20;
      textarea.scrollTop = Math.max(0, (problem.line - 3) * lineHeight);
    },
  };

  const listed = props.problems.length > 0;
  return (
    <div class={`field${listed ? " invalid" : ""}`}>
      {/* Its "for" names the textarea; the code editor's text box names this label itself (aria-labelledby). */}
      <label id={ids.labelId} for={editor ? undefined : id} onClick={() => editor?.focus()}>
        {props.label}
      </label>
      <p class="hint" id={ids.hintId}>
        {props.hint}
      </p>
      <div ref={host} class="code-editor" hidden={!editor} data-testid={`${props.field}-editor`} />
      {!editor && (
        <textarea
          id={id}
          name={props.field}
          ref={area}
          class="mono"
          rows={22}
          spellcheck={false}
          value={props.text}
          aria-invalid={listed ? "true" : undefined}
          aria-describedby={`${ids.hintId}${listed ? ` ${ids.problemsId}` : ""}`}
          onInput={(e) => props.onInput((e.currentTarget as HTMLTextAreaElement).value)}
        />
      )}
      {listed && (
        <ul class="problems" id={ids.problemsId} data-testid={`${props.field}-problems`}>
          {props.problems.map((p, i) => (
            <li key={i} class="field-error" data-line={p.line} data-source={p.source}>
              {p.line !== undefined && (
                <>
                  <button type="button" class="link" onClick={() => props.handle.current?.reveal(p)}>
                    Line {p.line}
                  </button>
                  {": "}
                </>
              )}
              {p.message}
              {p.source === "service" && <span class="small"> (refused by the service)</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** `canPublish`: the session's role may publish and save tests (admin); a developer drafts, tests and previews. */
export function PolicyEditor({ active, storedCases, onPublished, canPublish }: { active: Policy; storedCases: unknown[]; onPublished: () => void; canPublish: boolean }) {
  // null: the text shown is the server's (the active document, the saved cases); a string: edits.
  const [draft, setDraft] = useState<string | null>(null);
  const [casesDraft, setCasesDraft] = useState<string | null>(null);
  const [resets, setResets] = useState<Record<EditorField, number>>({ document: 0, cases: 0 });
  const reset = (field: EditorField) => setResets((r) => ({ ...r, [field]: r[field] + 1 }));
  const [savedCases, setSavedCases] = useState(storedCases);
  const [refused, setRefused] = useState<Problem[]>([]);
  const [results, setResults] = useState<{ title: string; results: ShownResult[] } | null>(null);
  const [impact, setImpact] = useState<{ forText: string; data: Impact } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  // An action's failure, shown beside the buttons it came from.
  const [failure, setFailure] = useState<{ near: "tests" | "publish"; error: unknown } | null>(null);
  const handles: Record<EditorField, { current: EditorHandle | null }> = { document: useRef(null), cases: useRef(null) };
  // What each code editor marks (its own checks with the refusals); undefined while a textarea stands in.
  const [marked, setMarked] = useState<Record<EditorField, Problem[] | undefined>>({ document: undefined, cases: undefined });
  const refusedOf = { document: useMemo(() => refused.filter((p) => p.field === "document"), [refused]), cases: useMemo(() => refused.filter((p) => p.field === "cases"), [refused]) };

  const text = draft ?? pretty(active.document);
  const casesText = casesDraft ?? pretty(savedCases);
  const texts = { document: text, cases: casesText };
  const parsed = { document: parseField("document", text), cases: parseField("cases", casesText) };
  // The code editor's marks; in a textarea, syntax problems as the person types, the server's refusals until that text changes.
  const problemsOf = (field: EditorField) => {
    const own = parsed[field];
    return marked[field] ?? ("problem" in own ? [own.problem] : refusedOf[field]);
  };
  const markedBy = (field: EditorField) => (problems: Problem[] | undefined) => setMarked((m) => ({ ...m, [field]: problems }));
  const unsavedCases = casesDraft !== null && casesDraft !== pretty(savedCases);
  const previewed = impact !== null && impact.forText === text;

  // An edit ends the server's refusals of that text (its syntax is checked again at once).
  const edit = (field: EditorField, set: (text: string) => void) => (changed: string) => {
    set(changed);
    setRefused((r) => r.filter((p) => p.field !== field));
  };

  const goTo = (problem: Problem) => handles[problem.field].current?.reveal(problem);

  // A syntax error is already marked where it is; a refusal is marked from now on, until an edit.
  const showProblem = (problem: Problem) => {
    if (problem.source === "service") setRefused([problem]);
    announce(problem.line === undefined ? problem.message : `Line ${problem.line}: ${problem.message}`);
    setTimeout(() => goTo(problem), 0);
  };

  /** Runs one action on the parsed texts it needs; refusals land at their line, failed tests in the table. */
  const act = async (name: string, needs: EditorField[], work: (values: Record<EditorField, unknown>) => Promise<void>) => {
    setFailure(null);
    setRefused([]);
    for (const field of needs) {
      const own = parsed[field];
      if ("problem" in own) return showProblem(own.problem);
    }
    const values = { document: (parsed.document as { value?: unknown }).value, cases: (parsed.cases as { value?: unknown }).value };
    setBusy(name);
    try {
      await work(values);
    } catch (caught) {
      if (caught instanceof ApiError && (caught.code === "invalid_request" || caught.code === "invalid_json")) return showProblem(locateRefusal(caught.message, texts, needs[needs.length - 1]));
      const failed = await refusedResults(caught);
      if (failed) setResults({ title: "Saved tests under this draft", results: failed });
      setFailure({ near: name === "test" || name === "save" ? "tests" : "publish", error: caught });
    } finally {
      setBusy(null);
    }
  };

  const runTests = () =>
    act("test", ["document", "cases"], async ({ document, cases }) => {
      const reply = await api<{ passed: number; failed: number; results: TestResult[] }>("POST", "/customer/policy/test", { json: { document, cases } });
      setResults({ title: "Tests under this draft", results: withExpectations(reply.results, cases) });
      announce(`${reply.passed} of ${reply.passed + reply.failed} tests pass under this draft.`);
    });

  const saveTests = () =>
    act("save", ["cases"], async ({ cases }) => {
      const reply = await api<{ cases: unknown[] }>("PUT", "/customer/policy/tests", { json: { cases } });
      setSavedCases(reply.cases);
      setCasesDraft(null);
      reset("cases");
      announce(`Tests saved: ${reply.cases.length} cases run before every publish.`);
    });

  const previewImpact = () =>
    act("impact", ["document"], async ({ document }) => {
      const data = await api<Impact>("POST", "/customer/policy/impact", { json: { document } });
      setImpact({ forText: text, data });
      const held = data.approval_required > 0 ? `; ${data.approval_required} would need approval` : "";
      announce(`Impact: ${data.changed} of ${data.evaluated} recent decisions would change${held}.`);
    });

  const publish = () =>
    act("publish", ["document"], async ({ document }) => {
      const published = await api<Policy>("PUT", "/customer/policy", { json: { document } });
      setDraft(null);
      setImpact(null);
      setResults(null);
      announce(`Policy published as version ${published.version}: new decisions use it.`);
      onPublished();
    });

  return (
    <section class="editor" aria-labelledby="editor-title">
      <h2 id="editor-title">Draft</h2>
      <div class="editor-grid">
        <div>
          <JsonArea
            field="document"
            label="Policy document (JSON)"
            hint="Start from the active version; nothing changes until you publish. Checked as you type; Ctrl+Space offers what may come at the cursor."
            text={text}
            problems={problemsOf("document")}
            reset={resets.document}
            refused={refusedOf.document}
            handle={handles.document}
            onProblems={markedBy("document")}
            onInput={edit("document", setDraft)}
          />
          {draft !== null && draft !== pretty(active.document) && (
            <button
              type="button"
              onClick={() => {
                setDraft(null);
                reset("document");
              }}
            >
              Discard draft
            </button>
          )}
        </div>
        <div>
          <JsonArea
            field="cases"
            label="Test cases (JSON)"
            hint='A list of {"name", "input", "key_id"?, "usage"?, "expect": {"decision", "reason"?, "rule"?, "approval_required"?}}. Publishing runs the saved ones.'
            text={casesText}
            problems={problemsOf("cases")}
            reset={resets.cases}
            refused={refusedOf.cases}
            handle={handles.cases}
            onProblems={markedBy("cases")}
            onInput={edit("cases", setCasesDraft)}
          />
          <div class="actions">
            <button type="button" class="primary" onClick={runTests} disabled={busy !== null}>
              {busy === "test" ? "Running…" : "Run tests"}
            </button>
            {canPublish && (
              <button type="button" onClick={saveTests} disabled={busy !== null || !unsavedCases}>
                {busy === "save" ? "Saving…" : "Save tests"}
              </button>
            )}
          </div>
          {unsavedCases && <p class="small" data-testid="unsaved-cases">Unsaved changes: publishing runs the saved tests, not these.</p>}
          {failure?.near === "tests" && <ErrorNotice error={failure.error} />}
        </div>
      </div>
      {results && <TestResults title={results.title} results={results.results} />}

      <h2 id="impact-title">Impact and publish</h2>
      <p>Before publishing, see how the draft would have decided your latest protect calls.</p>
      <button type="button" onClick={previewImpact} disabled={busy !== null}>
        {busy === "impact" ? "Deciding again…" : "Preview impact"}
      </button>
      {impact && <ImpactView impact={impact.data} stale={!previewed} />}
      {failure?.near === "publish" && <ErrorNotice error={failure.error} />}
      {canPublish ? (
        <div class="actions publish">
          <button type="button" class="primary" onClick={publish} disabled={busy !== null || !previewed} aria-describedby="publish-hint">
            {busy === "publish" ? "Publishing…" : "Publish new version"}
          </button>
          <p class="hint" id="publish-hint">
            {previewed ? "Publishing runs the saved tests first and makes a new immutable version; earlier versions stay for their receipts." : "Preview the impact of this draft first."}
          </p>
        </div>
      ) : (
        <p class="small" data-testid="publish-needs-admin">
          Publishing and saving tests need the admin role: ask an admin or owner to publish your draft.
        </p>
      )}
    </section>
  );
}

function ImpactView({ impact, stale }: { impact: Impact; stale: boolean }) {
  const counts: [string, number, string][] = [
    ["Decided again", impact.evaluated, "evaluated"],
    ["Unchanged", impact.unchanged, "unchanged"],
    ["Decision flips", impact.allowed_to_denied + impact.denied_to_allowed, "flips"],
    ["Allowed → denied", impact.allowed_to_denied, "allowed_to_denied"],
    ["Denied → allowed", impact.denied_to_allowed, "denied_to_allowed"],
    ["Same decision, other reason", impact.reason_changed, "reason_changed"],
    ["Would need approval", impact.approval_required, "approval_required"],
  ];
  return (
    <div class={`panel impact${stale ? " stale" : ""}`} data-testid="impact">
      {stale && (
        <Notice kind="warning">
          <p>The draft changed since this preview: preview again before publishing.</p>
        </Notice>
      )}
      <dl class="counts">
        {counts.map(([label, n, key]) => (
          <div key={key}>
            <dt>{label}</dt>
            <dd data-testid={`impact-${key}`}>{formatCount(n)}</dd>
          </div>
        ))}
      </dl>
      {impact.evaluated === 0 && <p>No protect calls stored yet: nothing to decide again.</p>}
      {impact.approval_required_by_day.length > 0 && (
        <div class="table-wrap">
          <table class="stack" data-testid="impact-approvals">
            <caption>Held for approval by the draft, per day (UTC)</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Requests</th>
              </tr>
            </thead>
            <tbody>
              {impact.approval_required_by_day.map((d) => (
                <tr key={d.day} data-day={d.day}>
                  <td data-label="Day">{d.day}</td>
                  <td data-label="Requests">{formatCount(d.count)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ImpactExamples examples={impact.examples.filter((e) => e.flipped)} testId="impact-examples" caption="Decisions that would flip (up to 20 changes shown)" />
      <ImpactExamples examples={impact.examples.filter((e) => !e.flipped)} testId="impact-reasons" caption="Same decision, another reason (no flip)" />
    </div>
  );
}

/** Changed decisions of the replay: flips or reason changes, each in its own table. */
function ImpactExamples({ examples, testId, caption }: { examples: Example[]; testId: string; caption: string }) {
  if (examples.length === 0) return null;
  return (
    <div class="table-wrap">
      <table class="stack" data-testid={testId}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Receipt</th>
            <th scope="col">Action</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {examples.map((e) => (
            <tr key={e.receipt_id}>
              <td data-label="Receipt">
                <Link href={`${BASE}/receipts/${e.receipt_id}`} class="mono wrap">
                  {e.receipt_id}
                </Link>
              </td>
              <td class="mono" data-label="Action">
                {e.input.action}
                {e.input.amount !== undefined ? ` ${e.input.amount}${e.input.currency ? ` ${e.input.currency}` : ""}` : ""}
              </td>
              <td data-label="Before">
                <OutcomeBadge outcome={e.before} />
              </td>
              <td data-label="After">
                <OutcomeBadge outcome={e.after} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function OutcomeBadge({ outcome }: { outcome: Outcome }) {
  return (
    <>
      <span class={`badge ${outcome.decision.toLowerCase()}`}>{outcome.decision}</span> <span class="mono small">{outcome.reason}</span>
    </>
  );
}
