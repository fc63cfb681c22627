// Policy test cases run against a document: pure, shared by POST /customer/policy/test, the
// publish gate and `warden policy test` (offline), so all three judge a case alike.
import { decide } from "../decide/engine.ts";
import { inlineFacts } from "../decide/entities.ts";
import type { PolicyDocument } from "../decide/policy.ts";
import type { CaseResult, TestCase } from "./model.ts";

export interface TestRun {
  passed: number;
  failed: number;
  results: CaseResult[];
}

/** A case passes when the decision matches and so do `reason` and `rule` where the case names them. */
export function runCases(document: PolicyDocument, cases: readonly TestCase[]): TestRun {
  const results = cases.map((c): CaseResult => {
    const facts = c.usage ? new Map(Object.entries(c.usage).map(([rule, before]) => [rule, { window_start: "", before: before as number }])) : undefined;
    // A case's entities stand for the store: its subject and resource are found among them, else not stored.
    const verdict = decide(c.input, document, { key_id: c.key_id ?? null }, facts, inlineFacts(c.input, c.entities ?? []));
    const reason = verdict.reasons[0];
    const approvalRequired = verdict.approval !== undefined;
    const passed =
      verdict.decision === c.expect.decision &&
      (c.expect.approval_required === undefined || c.expect.approval_required === approvalRequired) &&
      (c.expect.reason === undefined || c.expect.reason === reason) &&
      (c.expect.rule === undefined || c.expect.rule === verdict.rule);
    // Absent rather than false: the results of policies without approvals read as they always did.
    return { name: c.name, passed, decision: verdict.decision, reason, rule: verdict.rule, ...(approvalRequired ? { approval_required: true as const } : {}) };
  });
  const passed = results.filter((r) => r.passed).length;
  return { passed, failed: results.length - passed, results };
}
