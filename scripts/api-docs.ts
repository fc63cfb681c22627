// npm run docs:api: writes docs/api.md from the OpenAPI document the service itself serves at
// /openapi.json (built from the routes' TypeBox schemas), plus the error codes of
// src/http/errors.ts. test/docs/api-docs.test.ts renders it again and fails when the file differs,
// so the reference cannot drift from the code. `--check` only compares.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ERROR_STATUS, type ErrorCode } from "../src/http/errors.ts";
import { APPROVAL_EVENTS, EVENTS } from "../src/audit/events.ts";
import { WEBHOOK_EVENTS } from "../src/webhooks/events.ts";

export const API_DOC = join(import.meta.dir, "..", "docs", "api.md");

type Schema = Record<string, any>;
interface Operation {
  summary?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
}
export interface OpenApi {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, Operation>>;
}

const TAGS: Record<string, string> = {
  system: "System",
  accounts: "Accounts and sessions",
  keys: "API keys",
  members: "Teams: members and invitations",
  simulation: "Simulation",
  decisions: "Decisions: protect, execute, verify",
  authzen: "AuthZEN (OpenID Authorization API 1.0)",
  policy: "Policy",
  entities: "Entities",
  receipts: "Receipts and the receipt log",
  plans: "Plans, usage and upgrades",
  audit: "The audit trail",
  approvals: "Approvals",
  webhooks: "Webhooks",
  oauth: "OAuth for agents",
  gateways: "Remote MCP gateways",
};

// A paragraph under a section's title, where its routes alone do not say what a client must know.
const TAG_INTRO: Record<string, string> = {
  gateways: `An admin (or owner) registers an upstream MCP server, its Streamable HTTP URL (the
address rules of webhooks: \`https\`, a host that resolves only to public addresses, unless the
operator sets \`WEBHOOK_ALLOW_PRIVATE=1\`; checked at registration and again at every call), under
a \`name\` (\`^[a-z0-9][a-z0-9_-]{0,62}$\`, unique among the tenant's live gateways: 409
\`name_taken\`). Warden serves it at \`url\`, \`{PUBLIC_URL}/mcp/{gateway_id}\` (\`gw_\` ids), as
an MCP Streamable HTTP endpoint: every \`tools/call\` is decided as \`warden mcp gateway\` decides
it (action \`mcp.<name>.<tool>\`, the arguments flattened into \`context\` with
\`arguments_sha256\`; ALLOWED: executed, then forwarded, the result naming its receipts in
\`_meta.warden\`; DENIED: an \`isError\` result naming the reason and the receipt; held for
approval: the call waits up to 50 seconds for people, then is refused naming the approval (the
same call again answers that approval); anything failing refuses the call), everything else
passes through to the upstream unchanged. Batches (JSON arrays) are refused (400, JSON-RPC
\`-32600\`).

The endpoint is an OAuth resource server: a request needs \`Authorization: Bearer\` with an
access token warden issued for exactly this URL (RFC 8707) with the scope \`mcp\`. Without one,
or with one that is expired, revoked or for another gateway or tenant: 401 \`unauthorized\` with
\`WWW-Authenticate: Bearer resource_metadata="{PUBLIC_URL}/.well-known/oauth-protected-resource/mcp/{gateway_id}", scope="mcp"\`
(plus \`error="invalid_token"\` when a token was sent); without the scope: 403
\`insufficient_scope\`. A gateway that is disabled or deleted serves nothing: its tokens do not hold (401 as above) and its metadata answers 404 \`not_found\`. Each decision
is recorded under the gateway's own API key (made with it, labelled \`mcp gateway <name>\`,
metadata \`{mcp_gateway: gateway_id}\`, revoked when it is deleted) and its payload's
\`principal\` names the person (\`account_id\`, \`member_id\`, \`role\`), the agent
(\`client_id\`) and the gateway (\`gateway_id\`, \`gateway\`: its name); policies read
\`principal.role\`, \`principal.client_id\` and \`principal.gateway\` (docs/policy.md).

The upstream is called with the gateway's own credentials, never the client's token:
\`upstream_auth\` \`none\`, \`shared\` (\`secret\`, given at registration, sent as
\`Authorization: Bearer\`) or \`per_member\` (each member stores their own with
\`PUT .../secret\`; a member without one gets a JSON-RPC error \`-32001\` saying so). Secrets are
sealed at rest and never shown back; a member's own are erased when they leave or are removed.
An upstream answering 401 or 403 is reported to the agent as a JSON-RPC error \`-32002\`, not as
a challenge. Registering, disabling, enabling and deleting a
gateway and setting or erasing one's secret are events of the audit trail (\`gateway.*\`).
Listing and reading are for every member; registering, disabling and deleting need an admin or an
owner (403 \`forbidden_role\`). Each gateway takes one of the tenant's active API keys (at most
20: 429 \`quota_exceeded\`, \`limit: "api_keys_active"\`).`,
  entities: `What the tenant tells warden about its subjects and resources, for policies to read
(docs/policy.md): an entity is \`{type, id, attributes, parents?}\`, named by \`type\` and \`id\` (each 1
to 128 characters; in a path, percent-encode a \`/\`). \`attributes\` is an object of at most 64
names (identifiers: a letter or \`_\`, then letters, digits or \`_\`, at most 64 characters) whose
values are strings, numbers, booleans or lists of at most 100 of them (no \`null\`, no nested
object); \`parents\` a list of at most 100 \`{type, id}\`. One entity is at most 16 KiB (16,384 bytes
of UTF-8) of its JSON as sent (compact), and one \`PUT\` at most 1,000 entities within the 64 KiB body.
A \`PUT\` writes all of its entities or none: a bad one is 400 \`invalid_request\` naming its path
(\`body/entities/3/attributes/x: ...\`), as is an entity named twice in one call. Each write moves the
tenant's entity \`version\` (the \`PUT\` and \`DELETE\` answers), and each stored entity carries the
version that wrote it; the next decision reads the change, on every instance. A plan stores at most
\`entities\` of them (\`GET /features/catalog\`: free 1,000, pro 10,000, enterprise 100,000); a
\`PUT\` that would store more is 429 \`quota_exceeded\` with \`limit: "entities"\` and writes nothing.
Writes need feature \`custom_policy\` (403 \`plan_required\`) and the admin role (owners too); every
member reads. Writes are events of the audit trail: \`entities.upserted\` \`{upserted, version, stored}\`
and \`entities.deleted\` \`{type, id, version, stored}\`. From a file: \`warden entities import FILE\`
(JSON \`{entities: [...]}\`, a JSON array, or JSON lines).`,
  approvals: `A rule with \`effect: "require_approval"\` ([policy.md](policy.md#approvals-require_approval))
holds an action for people. \`POST /v1/protect\` answers DENIED at once (a client that knows
nothing of approvals fails closed) with \`approval: {approval_id, status: "pending", expires_at,
action_hash, outcome_receipt_id}\`, where \`action_hash\` is the protect receipt's \`content_hash\`.
One approval per key and action hash: a retry of the same protect by the same key while it is
pending answers that approval (no second approval, no second mail); while it is approved and
executable, or for \`expires_in\` after it was denied or expired, a retry answers it with its
status (a cancelled or executed one, or an older outcome, lets the key ask again). States, kept by the
database: \`pending -> approved | denied | expired | cancelled\`, then \`approved -> executed\`. A
quorum of distinct people (accounts: one who leaves and is invited back, or votes through another
membership, still has one vote) of the terms' roles approves; one deny denies; \`expired\` (a denial)
happens on time, nobody asking. Every step is a signed receipt in the tenant's log: the protect,
each vote (\`kind: "vote"\`, payload \`{v, kind, approval_id, action_hash, vote, member_id, account_id, role,
comment_hash, mfa, self_approval?, at}\`), the outcome (\`kind: "approval"\`, ALLOWED exactly when
approved, payload \`{decision, kind, outcome: {approval_id, action_hash, status, votes, terms,
expires_at, cancelled_by?}, protect_receipt_id, v}\`) and the execute of the outcome (its payload names
\`outcome: {approval_id, receipt_id}\`). The agent waits with \`GET /v1/approvals/{id}?wait=30\`
(answered as soon as the status changes), then executes \`outcome_receipt_id\` once within
\`execute_within\`, with the key that asked (another key: 403 \`forbidden_key\`). Only that key
cancels through \`POST /v1/approvals/{id}/cancel\` (another: 403 \`forbidden_key\`); an owner or admin
cancels through \`POST /customer/approvals/{id}/cancel\`. \`GET /customer/approvals/{id}/bundle\` saved to a file is checked offline by
\`warden verify --proof FILE\`: every receipt in the log, a quorum of distinct people (by
\`account_id\`) as eligible members on this exact action before expiry and before the outcome, the outcome naming exactly those votes.
Votes: 409 \`action_changed\` (the hash shown is not the approval's), \`already_voted\`,
\`not_pending\`; 403 \`forbidden_role\` (a role the terms do not name), \`self_approval\` (the
person who created the calling key, through any membership). Each member who may vote is emailed a
link to the approval in the console, but not the person who created the calling key, whose vote
would be refused (unless the tenant has that one member, its owner, with \`allow_self_approval\`
on); the console shows them no vote buttons and says why. At most 100 pending approvals per tenant (429 \`quota_exceeded\`, \`limit:
"approvals_pending"\`).`,
  keys: `**Keys for agents.** A key may carry, at creation or by \`PATCH /customer/keys/{key_id}\`
(a field sent replaces that property, \`null\` clears it, a field not sent stays): \`expires_at\`
(an instant in the future; from then on 401 \`key_expired\`), \`enabled\` (\`false\` suspends the
key, 401 \`key_disabled\`, until \`true\`; revoking stays final), \`actions\` (1 to 50 action
patterns as in policies, \`payment.*\`; a protect, execute, simulation or AuthZEN evaluation of
another action is 403 \`action_not_allowed\` and stores nothing), \`limits\`
(\`{protect_per_day?, per_second?, burst?}\`: the key's protects per UTC day, at most the plan's,
then 429 \`quota_exceeded\` with \`limit: "key_protect_per_day"\`; a token bucket over every
request with the key, refilled at \`per_second\` up to \`burst\` (default \`per_second\`), then
429 \`rate_limited\` with \`retry_after\`; both shared by every instance), \`allowed_ips\` (1 to 50
IPv4 or IPv6 CIDR blocks, or single addresses; a request from elsewhere is 401 \`unauthorized\`,
as for an unknown key) and \`metadata\` (at most 16 string entries, for the agent's name and
owner). Every change holds from the very next request, on every instance. \`GET /customer/keys\`
shows them all with \`last_used_at\`. \`POST /customer/keys/{key_id}/rotate\` with \`{overlap}\`
(0 to 86,400 seconds, default 0) keeps the old secret working until its \`overlap_until\`;
revoking the old key ends the overlap at once. The successor keeps the label and every property.
Keys coming within 7 days, and again within 1 day, of their \`expires_at\` are told to the
tenant's webhooks as event \`key.expiring\` \`{key_id, label, expires_at, threshold: "7d" | "1d"}\`.
A key with an \`expires_at\` that passed stays \`active\` in the list: give it a new one to use it again.`,
  authzen: `For API gateways and other policy enforcement points that speak the OpenID AuthZEN
Authorization API 1.0. Each evaluation is a \`POST /v1/protect\` of the calling key's tenant: the
same decision, a signed protect receipt in the log, the daily quota. \`action.name\` is the action,
\`resource\` is \`type/id\`, \`action.properties.amount\` and \`.currency\` the amount and currency,
and every other scalar goes into \`context\` under its path (\`subject.id\`,
\`subject.properties.department\`, \`resource.type\`, \`action.properties.method\`, and the
request's own context keys as they are); [authzen.md](authzen.md) has the whole mapping. The
answer is \`{decision, context: {receipt_id, reason_user}}\`, \`decision\` true if and only if
the protect was ALLOWED; under a \`require_approval\` rule the context also names
\`approval_id\`, \`approval_status\` and \`expires_at\`. A batch answers
\`{evaluations: [{decision}, ...], context: {receipt_ids: [...]}}\`: the decisions in order, bare
(as the working group's interop runners compare them) unless \`options.item_context\` is true,
and the receipts in the top-level context; an evaluation that cannot be decided (no \`resource\`
anywhere, a value warden cannot map, its daily quota spent) is
\`{decision: false, context: {error: {status, code, message, limit?}}}\`. A body that is not JSON
is 400 \`invalid_json\` here (not 415). Unlike the rest of the API, unknown fields are ignored, as
the specification requires.

The three Search routes answer from the tenant's stored entities (see Entities) under the active
policy: subject search the entities of \`subject.type\`, resource search those of
\`resource.type\` (the searched entity's \`id\`, if sent, is ignored), action search the actions
the policy's rules name, each kept when deciding it with the rest of the request, mapped as an
evaluation is, is ALLOWED. A search is a dry run: no receipt, no quota, no usage counted. Paging:
\`page: {limit, token}\` (limit 1 to 1000, default 50); the answer carries
\`page: {next_token, count}\` when more results follow (\`next_token\` non-empty) or when the
request sent a \`page\` (\`next_token\` \`""\` on the last page); a token continues only the
request that answered it, unchanged (otherwise 400 \`invalid_request\`).`,
  audit: `Every change of who may do what is a signed receipt of \`kind: "event"\` in the tenant's receipt
log: the same claims, hash chain and Merkle tree as decisions (\`key_id\`, \`decision\` and
\`protect_receipt_id\` null), so \`GET /customer/receipts\` lists events among the decisions, and
each one verifies offline like any receipt (\`warden verify --proof\`, \`POST /v1/verify\`, the
console's check). Its \`payload\` is \`{v: 2, kind: "event", event, actor, target, at}\`: \`actor\`
is \`{member_id}\`, or \`{operator}\` for an operator's change (the reviewer the operator script
names); \`target\` holds ids and new values, never an email or a secret. An event is written in
the transaction of its change, and a change whose event cannot be written does not happen; an
operator's change queues its event in its own transaction, and the service signs it into the log
within a second while it runs, else when it next starts (\`at\` is when the change happened). Events count toward no daily quota and not
toward \`receipts_stored\`. Signup records the first key's \`key.created\` (actor: the new owner;
target \`{key_id, label: "default"}\`) in its own transaction, so a new tenant's log holds one
receipt, that event, at seq 0 (\`tree_size\` 1, \`receipts_stored\` 0). The events (\`mfa.*\` go into the log of every tenant the person is a member of):

| family | events |
|---|---|
${[...new Set(EVENTS.map((e) => e.split(".")[0]!))].map((family) => `| \`${family}\` | ${EVENTS.filter((e) => e.startsWith(`${family}.`)).map((e) => `\`${e}\``).join(", ")} |`).join("\n")}

An approval's steps are in the trail too, as the approval's own signed receipts rather than
receipts of kind \`event\` (each step is already one): ${APPROVAL_EVENTS.map((e) => `\`${e}\``).join(", ")}.
The listing reads who took each step from the receipt: \`approval.requested\` is the protect that
opened it (\`actor: {key_id}\`, \`target: {approval_id, action, rule, protect_receipt_id}\`);
\`approval.voted\` a vote (\`{member_id}\`, \`{approval_id, vote, action_hash}\`); the outcome, named
by its status, \`{approval_id, status, votes}\` (the count): approved or denied by the member whose
vote decided it, cancelled by the key that withdrew it (its payload's \`outcome.cancelled_by\`),
expired by \`{service: "expiry"}\`; \`approval.executed\` the execute of the outcome
(\`{key_id}\`, \`{approval_id, outcome_receipt_id}\`). Like every decision, the protect and the
execute count toward the daily quotas and \`receipts_stored\`; votes and outcomes count toward none.`,
  webhooks: `An endpoint receives the tenant's events as they happen: a POST of
\`{type, timestamp, data}\` (JSON; \`data\` holds the ids and the signed receipts the event is about,
so a receiver can verify them offline) with the headers of Standard Webhooks
(standardwebhooks.com): \`webhook-id\` (the delivery's \`dlv_\` id, the same on every retry: use it
to drop duplicates), \`webhook-timestamp\` (the attempt's, Unix seconds) and \`webhook-signature\`:
\`v1,\` and the base64 HMAC-SHA256, keyed with the base64-decoded part of the secret after
\`whsec_\`, of \`\${webhook-id}.\${webhook-timestamp}.\${body}\`. For 24 hours after a rotation the
header holds two signatures, space-separated (new secret, then old); any Standard Webhooks library
verifies either (\`new Webhook(secret).verify(body, headers)\`).
Events: ${WEBHOOK_EVENTS.map((e) => `\`${e}\``).join(", ")}, or \`"*"\`
for all; \`webhook.test\` is sent only by the test route (at most 60 an hour per endpoint).

A delivery is committed with the change it tells of and leaves from an outbox: a 2xx answer ends
it; any other answer (a redirect too: none is followed), or none within 10 seconds, is retried
after 1 minute, 2, 4, ... doubling up to 8 hours, 18 attempts over about three days, then the
delivery is \`failed\`. A \`410 Gone\` disables the endpoint at once (its pending deliveries fail;
delete it and create another). At most 64 KiB of an answer is read. Targets must be \`https\` (at
most 2,000 characters, no user name or password in the URL); a host that resolves to a loopback,
private, link-local, carrier-grade NAT, multicast, documentation or otherwise non-public address
is refused (400 \`invalid_request\`, the message says why) when the endpoint is created, and again
at every attempt, which connects to the address it checked and follows no redirect; a delivery
refused so fails at once (no retries: the answer will not change); the operator may allow private
targets (\`WEBHOOK_ALLOW_PRIVATE=1\`). Each delivery in the list carries \`last_error\`, why its last
attempt failed in a few words (\`HTTP 500 Internal Server Error\`, \`no answer within 10 s\`, a TLS
error, \`hooks.example.com resolves to a private address\`); it is \`null\` once delivered. The
secret is kept sealed, never in the clear. Creating, rotating and deleting an endpoint are events of the audit trail.`,
  oauth: `Warden is the OAuth 2.1 authorization server of its remote MCP gateways (docs/mcp.md), as the MCP
authorization specification asks: an agent (an OAuth client) discovers the
metadata (RFC 8414) at \`/.well-known/oauth-authorization-server\` (issuer: the service's
\`PUBLIC_URL\`), names itself by a Client ID Metadata Document or registers (RFC 7591), sends the
person's browser to \`/oauth/authorize\` with PKCE (\`code_challenge_method=S256\` only; \`plain\` and
no challenge are refused) and a \`resource\` (RFC 8707): the URL of one gateway,
\`{PUBLIC_URL}/mcp/{gateway_id}\`, exactly. The token it gets works for that gateway alone.

**Clients.** A \`client_id\` is either one this service issued (\`cli_\` + 22 characters, from
\`POST /oauth/register\`: public clients only, no secret, 1 to 10 redirect URIs, each \`https\` or
\`http\` on \`localhost\`, \`127.0.0.1\` or \`[::1]\`, no fragment) or the \`https\` URL (with a path)
of the client's metadata document, which warden fetches under the rules of webhook targets (a host
that resolves to public addresses only unless \`WEBHOOK_ALLOW_PRIVATE=1\`; no redirect followed;
5 seconds; at most 5 KiB) and keeps for 5 minutes. The document must be JSON whose \`client_id\` is
its own URL, with valid \`redirect_uris\`, no \`client_secret\` and \`token_endpoint_auth_method\`
absent or \`"none"\`; its \`client_name\` (else the URL's host) is what the person is shown.
Registration is counted per client address like sign-up (429 \`rate_limited\`).

**Authorization.** The \`redirect_uri\` must be one the client registered (or its document lists),
character for character. A problem with the client or the redirect URI is shown (400
\`invalid_request\`), never sent to the redirect URI; any other problem goes back to the client at
its redirect URI with \`error\` (\`invalid_request\`, \`unsupported_response_type\`,
\`invalid_scope\`, \`invalid_target\` for a missing or unknown resource or a gateway that is not
active), \`error_description\`, \`state\` and \`iss\` (RFC 9207). A good request answers a page that
takes the browser to the console's consent page (\`/console/consent\` with the same query), where a
person who is not signed in signs in first (with their second factor, as their tenant requires)
and comes back. The page names the agent (its name and client id or URL), the gateway (its name and
tenant) and what it may do: call the gateway's tools as this person, each call decided by the
tenant's policy with the person's role; the scope granted is always \`mcp\`. Only a member of the
gateway's tenant, signed in to that tenant, may consent (another gets 404). The console's
\`POST /oauth/consent\` answers the client's redirect URI with a one-time \`code\` (or
\`error=access_denied\`), \`state\` and \`iss\`; it takes the person's session as a bearer token
(never a cookie), JSON only, and refuses a request whose \`Origin\` is another site's or whose
\`Sec-Fetch-Site\` is not \`same-origin\` (400 \`invalid_request\`).

**Tokens.** \`POST /oauth/token\` and \`POST /oauth/revoke\` take
\`application/x-www-form-urlencoded\` (JSON too), with \`client_id\` and no secret. Codes live 2 minutes and
are bound to the client, the redirect URI, the PKCE challenge and the gateway; access tokens
(\`wat_...\`) live 10 minutes (\`expires_in: 600\`), refresh tokens (\`wrt_...\`) 30 days and change
at every use. A code or a refresh token used a second time is refused and revokes its grant, so
every token issued from it stops working. \`resource\`, when sent, must be the grant's gateway
(\`invalid_target\`). Refusals are RFC 6749's body, \`{error, error_description, request_id}\`
(\`invalid_request\`, \`invalid_client\` with 401, \`invalid_grant\`, \`invalid_target\`,
\`unsupported_grant_type\`; registration: \`invalid_redirect_uri\`), with \`Cache-Control: no-store\`.
Revoking an access or refresh token (RFC 7009) revokes its whole grant; an unknown token, or another
client's, gets the same 200 and changes nothing.

**Grants.** One consent is one grant (\`grt_\`): one person, one agent, one gateway. A member lists
and revokes their own; an admin or owner every member's. A grant also ends when it is revoked on
reuse or by the client, when the member leaves the tenant (its tokens stop working at once) and,
while a gateway is disabled, its tokens are refused. Events of the audit trail:
\`oauth.grant_created\` \`{grant_id, gateway_id, client_id, client_name, scope}\` by the person who
consented, and \`oauth.grant_revoked\` \`{grant_id, ..., reason}\`, by the member who revoked it or,
for \`code_reused\`, \`refresh_token_reused\` and \`token_revoked\`, by \`{operator: "oauth"}\`.`,
};

// What each error code means; the status comes from src/http/errors.ts. A code missing here
// stops the generator, so a new code cannot reach the docs without an explanation.
const ERROR_MEANING: Record<ErrorCode, string> = {
  invalid_json: "the body is not parseable JSON",
  invalid_code: "a second-factor code (TOTP or recovery) that is wrong, expired or already used; also disabling when no factor is active",
  mfa_enabled: "enrolling a second factor while one is active: disable it first",
  forbidden_role: "the caller's role in the tenant does not allow this; `required_role` names the narrowest role that does (owner > admin > developer > approver > viewer)",
  mfa_enrollment_required: "the tenant requires a second factor and the caller has none: only enrolling one, and the caller's own account, stay open",
  already_member: "inviting, or accepting an invitation for, a person who is already a member of the tenant",
  last_owner: "removing or demoting the tenant's last owner: make another member owner first",
  invalid_request: "the body, a parameter or the query fails validation (`message` names the JSON path); also unknown fields and a lone UTF-16 surrogate in a string",
  invalid_request_id: "`X-Request-ID` is not 1 to 128 visible ASCII characters",
  invalid_preset: "unknown simulation preset",
  invalid_email: "not a valid email address",
  disposable_email: "an address at a disposable-email domain",
  password_too_short: "under 8 characters",
  password_too_long: "over 256 characters",
  password_too_common: "one of the most common passwords",
  invalid_plan: "unknown plan, or not above the current one",
  invalid_token: "unknown verification or reset token",
  token_expired: "verification or reset token past its life (400); a JWT past its 24 hours (401)",
  token_used: "verification or reset token already used",
  unauthorized: "missing or invalid JWT or API key; wrong email or password",
  key_revoked: "an API key that was revoked or rotated (once a rotation's `overlap` has ended)",
  key_expired: "an API key past its `expires_at`",
  key_disabled: "an API key suspended with `PATCH /customer/keys/{key_id}` `{enabled: false}`; `{enabled: true}` lifts it",
  action_not_allowed: "a protect (or execute, or AuthZEN evaluation) of an action outside the key's `actions` list; nothing is stored",
  https_required: "a plain-HTTP request (behind a proxy: without `X-Forwarded-Proto: https`)",
  plan_required: "the feature needs a higher plan; the body has `required_plan`",
  feature_not_granted: "a request-only feature an operator has not granted",
  decision_denied: "execute of a DENIED protect receipt",
  not_found: "unknown route, or a resource of another tenant",
  email_taken: "signup with a registered email",
  upgrade_pending: "a pending upgrade request already exists",
  not_pending: "cancel of a request, invitation or approval that is no longer pending; a vote on an approval that was decided or has expired",
  key_not_active: "rotate or revoke of a key that is not active",
  name_taken: "registering a remote MCP gateway under the name of a live gateway of the tenant",
  insufficient_scope: "a remote MCP gateway's access token without the scope mcp (the WWW-Authenticate header says error=\"insufficient_scope\")",
  origin_not_allowed: "a request to a remote MCP gateway whose Origin header is neither the service's own origin nor that of the agent's redirect URI (the MCP transport's DNS-rebinding rule)",
  webhook_disabled: "a test event to a webhook endpoint that was disabled (it answered 410 Gone): delete it and create another",
  already_executed: "execute twice on one protect receipt",
  already_voted: "a second vote on one approval by the same person (through any membership, or after leaving and joining again)",
  forbidden_key: "cancel or execute of an approval by a key other than the one that asked",
  action_changed: "a vote whose action_hash is not the approval's: the action shown is not the one to decide",
  self_approval: "a vote by the person who created the key that asked, through any of their memberships (allowed only in a one-member tenant whose owner turned allow_self_approval on)",
  idempotency_in_progress: "the same `Idempotency-Key` while the first request still runs",
  payload_too_large: "body over 64 KiB",
  unsupported_media_type: "a body that is not `application/json`",
  idempotency_mismatch: "the same `Idempotency-Key` with a different body",
  policy_tests_failed: "publishing (or restoring) a policy under which a stored test case fails; the body has `results`, nothing is published",
  rate_limited: "too many attempts; `retry_after` (seconds) in the body, `Retry-After` header",
  quota_exceeded: "daily quota or receipt storage used up, or a cap reached; `limit` names it: `protect_per_day`, `execute_per_day`, `receipts_stored`, `policy_versions`, `webhooks` (10 endpoints) and others",
  internal_error: "anything unexpected (quote the `request_id`)",
  unavailable: "the database cannot be reached; `Retry-After` header",
};

const INTRO = `Every request and response body is JSON; a POST body of another type gets 415 (400 on
the AuthZEN routes), one over 64 KiB gets 413, and unknown fields are refused. A body is UTF-8 and
every string in it Unicode text: a lone UTF-16 surrogate (an escape from \`\\ud800\` to \`\\udfff\`
without its pair), as a value or a property name, is 400 \`invalid_request\` on every route, the
message naming its JSON path (\`body/label: ...\`). Successful bodies carry \`ok: true\`; errors are
\`{ "ok": false, "error": "<code>", "message": "...", "request_id": "..." }\` plus the fields
named under [Error codes](#error-codes). Every response carries \`X-Request-ID\` (yours, when you
send one of 1 to 128 visible ASCII characters). Timestamps are ISO 8601 UTC with milliseconds;
ids are a prefix (\`cust_\`, \`key_\`, \`upgr_\`, \`req_\`, \`rcpt_\`, \`whk_\`, \`dlv_\`) and 22 random base62 characters.

Authentication: **JWT** is \`Authorization: Bearer <token>\` from signup or login (24 hours);
**API key** is \`X-API-Key: warden_live_...\`. Every POST that creates or changes something
honours \`Idempotency-Key\` (1 to 255 characters, 24 hours). Protect and execute answers carry
\`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` on plans with a daily quota.
A worked example from signup to an offline check: [bot-example.md](bot-example.md).

The OpenAPI 3.1 document (\`GET /openapi.json\`) is built when the service starts and stays the same
bytes while it runs, whatever requests came first; \`servers\` names its \`PUBLIC_URL\`. Every object
in it is closed (\`additionalProperties: false\`) unless it says otherwise (AuthZEN's). Each
operation lists every status it can answer: its own, plus on every operation 400
(\`invalid_request_id\`), 403 (\`https_required\`), 413 and 500, on every POST, PUT, PATCH and
DELETE 415 (400 on the AuthZEN routes), and wherever a credential is checked 401, 503 and (a
session) 403 or (an API key) 429. The body of each error status is one component, \`Error<status>\`: its codes, and the fields
each code adds (\`required_plan\`, \`feature\`, \`required_role\`, \`limit\`, \`retry_after\`,
\`results\`). Operations that take no credential say \`security: []\`. The log's C2SP tiles
have the prefix \`/customer/log/\`; the tile route's path parameter is \`{tile}\`, the path below
\`tile/\` with its slashes as they are or as \`%2F\`. No two paths of the document match one URL.
Redocly's \`recommended-strict\` rules lint it and openapi-typescript generates types from it in
the tests (\`npm run lint:openapi\`), with no finding ignored.`;

/** docs/api.md for an OpenAPI document. */
export function renderApiDoc(spec: OpenApi): string {
  const byTag = new Map<string, [string, string, Operation][]>();
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = op.tags?.[0] ?? "other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push([method.toUpperCase(), path, op]);
    }
  }
  const tags = [...byTag.keys()].sort((a, b) => order(a) - order(b));
  const out: string[] = [
    `# ${spec.info.title} HTTP API ${spec.info.version}`,
    "",
    "<!-- Generated by `npm run docs:api` from GET /openapi.json; edit the routes, not this file. -->",
    "",
    `${spec.info.description ?? ""} The same document, live: \`GET /openapi.json\`, or \`/docs\` in a browser.`,
    "",
    INTRO,
    "",
    "| method | path | auth | what it does |",
    "|---|---|---|---|",
  ];
  for (const tag of tags) {
    for (const [method, path, op] of byTag.get(tag)!) {
      out.push(`| ${method} | [\`${path}\`](#${anchor(method, path)}) | ${auth(op)} | ${cell(op.summary ?? "")} |`);
    }
  }
  for (const tag of tags) {
    out.push("", `## ${TAGS[tag] ?? tag}`);
    if (TAG_INTRO[tag]) out.push("", TAG_INTRO[tag]);
    for (const [method, path, op] of byTag.get(tag)!) out.push("", ...operation(method, path, op));
  }
  out.push("", "## Error codes", "", "| status | error | when |", "|---|---|---|");
  for (const [code, status] of Object.entries(ERROR_STATUS).sort((a, b) => a[1] - b[1])) {
    const meaning = ERROR_MEANING[code as ErrorCode];
    if (!meaning) throw new Error(`scripts/api-docs.ts: no explanation for the error code ${code}`);
    out.push(`| ${status} | \`${code}\` | ${cell(meaning)} |`);
  }
  return out.join("\n") + "\n";
}

function order(tag: string): number {
  const i = Object.keys(TAGS).indexOf(tag);
  return i === -1 ? Number.MAX_SAFE_INTEGER : i;
}

function anchor(method: string, path: string): string {
  return `${method} ${path}`.toLowerCase().replace(/[^a-z0-9 _-]/g, "").replace(/ /g, "-");
}

function auth(op: Operation): string {
  const security = op.security ?? [];
  const schemes = security.flatMap((s) => Object.keys(s));
  if (schemes.length === 0) return "none";
  // An empty requirement beside others: the credential is optional.
  const optional = security.some((s) => Object.keys(s).length === 0) ? "none or " : "";
  return optional + schemes.map((s) => (s === "apiKey" ? "API key" : s === "bearer" ? "JWT" : s === "apiKeyBearer" ? "API key as `Authorization: Bearer`" : s)).join(" or ");
}

function operation(method: string, path: string, op: Operation): string[] {
  const lines = [`### ${method} ${path}`, "", `${op.summary ?? ""}`.trim() + ".", "", `Auth: ${auth(op)}.`];
  const params = op.parameters ?? [];
  if (params.length) {
    lines.push("", "| parameter | in | required | type | notes |", "|---|---|---|---|---|");
    for (const p of params) lines.push(`| \`${p.name}\` | ${p.in} | ${p.required ? "yes" : "no"} | ${cell(typeOf(p.schema ?? {}))} | ${cell(notes(p.schema ?? {}))} |`);
  }
  const body = op.requestBody?.content?.["application/json"]?.schema;
  if (body) {
    const rows = fields(body);
    lines.push("", rows.length ? "Request body:" : "Request body: `{}`.");
    if (rows.length) lines.push("", ...table(rows));
  }
  const errors: string[] = [];
  for (const [status, response] of Object.entries(op.responses ?? {})) {
    if (!status.startsWith("2")) {
      errors.push(status);
      continue;
    }
    const schema = response.content?.["application/json"]?.schema;
    const rows = schema ? fields(schema) : [];
    lines.push("", rows.length ? `Response ${status}:` : `Response ${status}.`);
    if (rows.length) lines.push("", ...table(rows));
  }
  if (errors.length) lines.push("", `Errors: ${errors.join(", ")} (the error body; see [Error codes](#error-codes)).`);
  return lines;
}

type Row = [path: string, type: string, required: boolean, notes: string];

function table(rows: Row[]): string[] {
  return ["| field | type | required | notes |", "|---|---|---|---|", ...rows.map(([p, t, r, n]) => `| \`${p}\` | ${cell(t)} | ${r ? "yes" : "no"} | ${cell(n)} |`)];
}

/** One row per property, nested objects and arrays of objects flattened to dotted paths. */
function fields(schema: Schema, prefix = ""): Row[] {
  const rows: Row[] = [];
  const required = new Set<string>(schema.required ?? []);
  for (const [name, sub] of Object.entries<Schema>(schema.properties ?? {})) {
    const path = prefix + name;
    rows.push([path, typeOf(sub), required.has(name), notes(sub)]);
    const inner = objectOf(sub);
    if (inner) rows.push(...fields(inner.schema, `${path}${inner.array ? "[]" : ""}.`));
  }
  return rows;
}

/** The object schema inside a property (itself, an array's items, or a nullable variant). */
function objectOf(schema: Schema): { schema: Schema; array: boolean } | undefined {
  if (schema.properties) return { schema, array: false };
  if (schema.items?.properties) return { schema: schema.items, array: true };
  for (const variant of schema.anyOf ?? []) {
    const found = objectOf(variant);
    if (found) return found;
  }
  return undefined;
}

function typeOf(schema: Schema): string {
  if ("const" in schema) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(" \\| ");
  if (schema.anyOf) return [...new Set(schema.anyOf.map(typeOf))].join(" \\| ");
  const type = Array.isArray(schema.type) ? schema.type.join(" \\| ") : schema.type;
  if (type === "array") return `array of ${schema.items ? typeOf(schema.items) : "any"}`;
  if (type === "object" && !schema.properties && schema.patternProperties) {
    const [pattern, values] = Object.entries<Schema>(schema.patternProperties)[0];
    return `object: \`${pattern}\` → ${typeOf(values)}`;
  }
  return type ?? (schema.format ? `string (${schema.format})` : "any");
}

/** A field's constraints, then what its schema says it means. */
function notes(schema: Schema): string {
  return [constraints(schema), schema.description].filter(Boolean).join("; ");
}

function constraints(schema: Schema): string {
  const notes: string[] = [];
  const range = (min: unknown, max: unknown, unit = "") =>
    min !== undefined && max !== undefined ? `${min} to ${max}${unit}` : min !== undefined ? `at least ${min}${unit}` : `at most ${max}${unit}`;
  if (schema.minLength !== undefined || schema.maxLength !== undefined) notes.push(range(schema.minLength, schema.maxLength, " characters"));
  if (schema.minimum !== undefined || schema.maximum !== undefined) notes.push(range(schema.minimum, schema.maximum));
  if (schema.minItems !== undefined || schema.maxItems !== undefined) notes.push(range(schema.minItems, schema.maxItems, " items"));
  if (schema.maxProperties !== undefined) notes.push(`at most ${schema.maxProperties} keys`);
  if (schema.multipleOf === 1) notes.push("whole number");
  if (schema.pattern) notes.push(`\`${schema.pattern}\``);
  if (schema.format && schema.format !== "numeric") notes.push(schema.format);
  if (schema.default !== undefined) notes.push(`default ${JSON.stringify(schema.default)}`);
  return notes.join("; ");
}

function cell(text: string): string {
  return text.replace(/\n/g, " ").replace(/(?<!\\)\|/g, "\\|");
}

/** The OpenAPI document of a service in memory (embedded database, nothing listening). */
export async function currentOpenApi(): Promise<OpenApi> {
  const { loadConfig } = await import("../src/config.ts");
  const { createService } = await import("../src/app/service.ts");
  const service = await createService(loadConfig({ DATA_DIR: "memory://", LOG_LEVEL: "silent", BCRYPT_COST: "4" }));
  try {
    const response = await service.handle(new Request("https://warden.local/openapi.json"));
    return (await response.json()) as OpenApi;
  } finally {
    await service.close();
  }
}

if (import.meta.main) {
  const spec = await currentOpenApi();
  const rendered = renderApiDoc(spec);
  if (process.argv.includes("--check")) {
    const current = readFileSync(API_DOC, "utf8");
    if (current !== rendered) {
      console.error("docs/api.md is out of date: run npm run docs:api");
      process.exit(1);
    }
    console.log("docs/api.md matches /openapi.json");
  } else {
    writeFileSync(API_DOC, rendered);
    console.log(`docs/api.md: ${Object.values(spec.paths).flatMap(Object.keys).length} operations`);
  }
  process.exit(0);
}
