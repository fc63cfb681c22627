// Shapes of the AuthZEN Authorization API 1.0 routes (docs/authzen.md): the evaluation request and
// response, the batch, and the PDP metadata. The specification tells receivers to ignore unknown
// fields, so these objects stay open, unlike the rest of the API.
import { t } from "elysia";

/** Request objects keep fields this version does not know (the body's top level too, which Elysia would otherwise close). */
const open = { additionalProperties: true } as const;

const Properties = t.Record(t.String(), t.Unknown(), { description: "Any attributes; mapped into the protect input's context (docs/authzen.md)" });

export const Subject = t.Object(
  {
    type: t.String({ description: "the subject's type, e.g. user" }),
    id: t.String({ description: "the subject's id, scoped to its type" }),
    properties: t.Optional(Properties),
  },
  open,
);
export const Resource = t.Object(
  {
    type: t.String({ description: "the resource's type, e.g. document" }),
    id: t.String({ description: "the resource's id, scoped to its type" }),
    properties: t.Optional(Properties),
  },
  open,
);
export const Action = t.Object(
  {
    name: t.String({ description: "the protect input's action" }),
    properties: t.Optional(t.Record(t.String(), t.Unknown(), { description: "`amount` and `currency` become the protect input's fields; the rest goes into its context" })),
  },
  open,
);
export const Context = t.Record(t.String(), t.Unknown(), { description: "The environment of the request; its scalars go into the protect input's context" });

export const EvaluationRequest = t.Object({ subject: Subject, action: Action, resource: Resource, context: t.Optional(Context) }, open);
export type EvaluationRequest = typeof EvaluationRequest.static;

export const SEMANTICS = ["execute_all", "deny_on_first_deny", "permit_on_first_permit"] as const;
export type Semantic = (typeof SEMANTICS)[number];

/** Most evaluations one batch may hold: each is a protect, stored and counted. */
export const MAX_EVALUATIONS = 100;

/** One item of a batch: any entity it leaves out comes from the top level. */
export const EvaluationItem = t.Object({ subject: t.Optional(Subject), action: t.Optional(Action), resource: t.Optional(Resource), context: t.Optional(Context) }, open);
export type EvaluationItem = typeof EvaluationItem.static;

export const EvaluationsRequest = t.Object(
  {
    subject: t.Optional(Subject),
    action: t.Optional(Action),
    resource: t.Optional(Resource),
    context: t.Optional(Context),
    evaluations: t.Optional(t.Array(EvaluationItem, { maxItems: MAX_EVALUATIONS })),
    options: t.Optional(
      t.Object(
        {
          evaluations_semantic: t.Optional(t.Union(SEMANTICS.map((s) => t.Literal(s)), { description: "execute_all (the default), deny_on_first_deny or permit_on_first_permit" })),
          item_context: t.Optional(t.Boolean({ description: "warden's option: true puts each evaluation's context (receipt_id, reason_user, approval) in its item; otherwise an item is {decision} (plus context.error when it failed)" })),
        },
        open,
      ),
    ),
  },
  open,
);
export type EvaluationsRequest = typeof EvaluationsRequest.static;

/** What a decision carries: the signed protect receipt that records it, the policy's reason, and the approval it waits for. */
const DecisionContext = t.Object({
  receipt_id: t.String({ pattern: "^rcpt_", description: "the protect receipt that records this evaluation (GET /customer/receipts/{receipt_id})" }),
  reason_user: t.String({ description: "the reason of the policy rule (or default) that decided" }),
  approval_id: t.Optional(t.String({ pattern: "^apv_", description: "under a require_approval rule: the approval that holds the action (GET /v1/approvals/{approval_id})" })),
  approval_status: t.Optional(t.String({ description: "under a require_approval rule: the approval's status, pending while people decide" })),
  expires_at: t.Optional(t.String({ format: "date-time", description: "under a require_approval rule: when the approval expires unless decided" })),
});
/** An evaluation of a batch that could not be decided: closed, with the error that stopped it. */
const ErrorContext = t.Object({
  error: t.Object({
    status: t.Integer({ description: "the HTTP status the same refusal has on its own (400, or as on POST /v1/protect)" }),
    code: t.String({ description: "the error code, e.g. invalid_request or quota_exceeded" }),
    message: t.String(),
    limit: t.Optional(t.String({ description: "for quota_exceeded: which limit" })),
  }),
});

export const Decision = t.Object({ decision: t.Boolean({ description: "true if and only if warden's decision is ALLOWED" }), context: DecisionContext });
export type Decision = typeof Decision.static;
/** An evaluation of a batch as decided: its whole context, or the error that closed it. */
export type BatchDecision = { decision: boolean; context: typeof DecisionContext.static | typeof ErrorContext.static };
/** An item of a batch's answer: the decision, with its context when asked for (options.item_context) or when it failed. */
const BatchItem = t.Object({ decision: t.Boolean(), context: t.Optional(t.Union([DecisionContext, ErrorContext])) });
export const BatchResponse = t.Object({
  evaluations: t.Array(BatchItem, { description: "the decisions in request order (only those decided, under a short-circuit semantic)" }),
  context: t.Object({
    receipt_ids: t.Array(t.Union([t.String({ pattern: "^rcpt_" }), t.Null()]), { description: "the receipt of each item of evaluations, in its order; null for an item that failed" }),
  }),
});
export type BatchResponse = typeof BatchResponse.static;
export const EvaluationsResponse = t.Union([BatchResponse, Decision]);

export const PdpMetadata = t.Object({
  policy_decision_point: t.String({ description: "this service's PUBLIC_URL" }),
  access_evaluation_endpoint: t.String(),
  access_evaluations_endpoint: t.String(),
  search_subject_endpoint: t.String(),
  search_resource_endpoint: t.String(),
  search_action_endpoint: t.String(),
});

// The Search APIs (docs/authzen.md, "Search"): the entity searched for names its type; its id, if
// sent, is ignored, as the specification says.

/** Most results one search page holds, and how many when the request names no limit. */
export const SEARCH_MAX_LIMIT = 1000;
export const SEARCH_DEFAULT_LIMIT = 50;

const SearchedType = (what: string) => t.String({ minLength: 1, maxLength: 128, description: `the type of the ${what}s searched for (an entity type of the store)` });
const IgnoredId = t.Optional(t.String({ description: "ignored: the search answers the ids" }));

export const SearchPage = t.Object(
  {
    token: t.Optional(t.String({ minLength: 1, maxLength: 1000, description: "the next_token of the previous page; the rest of the request must be unchanged" })),
    limit: t.Optional(t.Integer({ minimum: 1, maximum: SEARCH_MAX_LIMIT, description: `most results in the page (default ${SEARCH_DEFAULT_LIMIT})` })),
    properties: t.Optional(t.Record(t.String(), t.Unknown(), { description: "ignored: warden defines no paging properties" })),
  },
  open,
);

export const SubjectSearchRequest = t.Object(
  {
    subject: t.Object({ type: SearchedType("subject"), id: IgnoredId, properties: t.Optional(Properties) }, open),
    action: Action,
    resource: Resource,
    context: t.Optional(Context),
    page: t.Optional(SearchPage),
  },
  open,
);
export type SubjectSearchRequest = typeof SubjectSearchRequest.static;

export const ResourceSearchRequest = t.Object(
  {
    subject: Subject,
    action: Action,
    resource: t.Object({ type: SearchedType("resource"), id: IgnoredId, properties: t.Optional(Properties) }, open),
    context: t.Optional(Context),
    page: t.Optional(SearchPage),
  },
  open,
);
export type ResourceSearchRequest = typeof ResourceSearchRequest.static;

/** No action: the search answers the actions (one sent is ignored). */
export const ActionSearchRequest = t.Object({ subject: Subject, resource: Resource, context: t.Optional(Context), page: t.Optional(SearchPage) }, open);
export type ActionSearchRequest = typeof ActionSearchRequest.static;

const ResultPage = t.Object({
  next_token: t.String({ description: "the token of the next page; the empty string when this page is the last" }),
  count: t.Integer({ minimum: 0, description: "how many results this page holds" }),
});
const pageDescription = "present when there are more results (next_token non-empty) or when the request sent a page";

export const EntitySearchResponse = t.Object({
  page: t.Optional(t.Object(ResultPage.properties, { description: pageDescription })),
  results: t.Array(t.Object({ type: t.String(), id: t.String() }), { description: "the stored entities of the type searched for under which the decision is ALLOWED, in (type, id) order" }),
});
export type EntitySearchResponse = typeof EntitySearchResponse.static;
export const ActionSearchResponse = t.Object({
  page: t.Optional(t.Object(ResultPage.properties, { description: pageDescription })),
  results: t.Array(t.Object({ name: t.String() }), { description: "the actions the policy's rules name under which the decision is ALLOWED, in name order" }),
});
export type ActionSearchResponse = typeof ActionSearchResponse.static;
