// Everything a route needs, built once at start (src/app/service.ts) and passed down. Every
// cache or batcher the service keeps is one of these objects, never module state.
import type { SignupEmails } from "../accounts/email.ts";
import type { PasswordHasher, PasswordRules } from "../accounts/passwords.ts";
import type { Sessions } from "../accounts/sessions.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Config } from "../config.ts";
import type { Db } from "../db/index.ts";
import type { KeyAuthenticator } from "../keys/authenticate.ts";
import type { EntityLookup } from "../entities/lookup.ts";
import type { PolicyVersions } from "../policies/store.ts";
import type { ReceiptAppender } from "../receipts/append.ts";
import type { UsageLimits } from "../usage/limits.ts";
import type { PresetOutcomes } from "../simulation/simulate.ts";
import type { Logger } from "../log.ts";
import type { Mailer } from "../mail/worker.ts";
import type { ReceiptSigner } from "../receipts/signer.ts";
import type { TenantTurns } from "../receipts/turns.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Probes } from "../observability/probes.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { AuditOutbox } from "../audit/outbox.ts";
import type { Approvals } from "../approvals/approvals.ts";
import type { ApprovalWaiters } from "../approvals/waiters.ts";
import type { WebhookTargets } from "../webhooks/target.ts";
import type { WebhookWorker } from "../webhooks/worker.ts";
import type { OAuthTokens } from "../oauth/tokens.ts";
import type { OAuthClients } from "../oauth/clients.ts";

export interface Deps {
  config: Config;
  db: Db;
  log: Logger;
  sessions: Sessions;
  /**
   * API keys to principals; a key's context is reused for 30 s while its tenant's epoch stands,
   * so a revoke is seen by the next request (docs/architecture.md, "The objects the root builds").
   */
  keys: KeyAuthenticator;
  /**
   * The stored entities a decision reads (subject, resource), cached per tenant while its entity
   * version stands, so a write is seen by the next decision on every instance (src/entities/lookup.ts).
   */
  entities: EntityLookup;
  /** Policy documents by version (immutable, so cached without expiry). */
  policies: PolicyVersions;
  /** Simulation outcomes by preset and policy version (pure, so cached without expiry). */
  presetOutcomes: PresetOutcomes;
  signer: ReceiptSigner;
  /** Appends protect and execute receipts, many requests to one commit. */
  receipts: ReceiptAppender;
  /** Protects under usage rules, decided on the counters this process knows (src/usage/limits.ts). */
  usageLimits: UsageLimits;
  /** A change and the signed receipts of its audit events, in one transaction (src/audit/trail.ts). */
  audit: AuditTrail;
  /** Signs and appends the audit events operators' procedures queued (audit_outbox). */
  auditOutbox: AuditOutbox;
  /** Approvals: votes, outcomes, cancel, expiry; every step a signed receipt (src/approvals/). */
  approvals: Approvals;
  /** Agents waiting on an approval, woken by the commit's notification (no database connection held). */
  approvalWaiters: ApprovalWaiters;
  /** Checkpoints and proofs of one tenant take turns at a bounded rate, so a loop of them cannot crowd out other tenants. */
  logReads: TenantTurns;
  /**
   * A bcrypt hash of a random password, verified against when a login email is unknown. Made in
   * the background at start-up: a login in the first moments waits for it, so unknown and known
   * emails still cost the same.
   */
  dummyPasswordHash: Promise<string>;
  /** bcrypt for requests, under the global cap on concurrent hashes. */
  passwords: PasswordHasher;
  /** Which passwords may be set (the common-password list, loaded at the first check). */
  passwordRules: PasswordRules;
  /** Which addresses may sign up or be invited (the disposable-domain list, loaded at the first check). */
  signupEmails: SignupEmails;
  /** Seals and opens TOTP secrets (key derived from the service secret). */
  totpSecrets: SecretBox;
  /** Seals the token of a verification or reset link while its mail waits in the outbox. */
  mailTokens: SecretBox;
  version: string;
  now: () => Date;
  /** The mail outbox worker: nudge it after committing an enqueue. */
  mail: Mailer;
  /** Seals and opens webhook signing secrets (key derived from the service secret). */
  webhookSecrets: SecretBox;
  /** Where a webhook may go: the URL's form and its host's addresses (WEBHOOK_ALLOW_PRIVATE). */
  webhookTargets: WebhookTargets;
  /** The webhook outbox worker: nudge it after committing a delivery. */
  webhooks: WebhookWorker;
  /**
   * OAuth codes and tokens of remote gateways (src/oauth/tokens.ts): the authorization server
   * issues them, a gateway checks one with verify(token, resource).
   */
  accessTokens: OAuthTokens;
  /** OAuth clients: registered ones, and metadata documents fetched under the webhooks' address rules, each kept 5 minutes. */
  oauthClients: OAuthClients;
  /** Seals and opens the remote gateways' secrets: their keys', their shared ones, the members' own (key derived from the service secret). */
  gatewaySecrets: SecretBox;
  /** How long a remote gateway's tools/call held for approval waits for people (absent: src/gateways/routes.ts APPROVAL_WAIT_MS). */
  gatewayApprovalWaitMs?: number;
  /** Prometheus metrics, on a registry of this service's own (src/observability/metrics.ts). */
  metrics: Metrics;
  /** /livez and /readyz; drain() when a graceful stop begins. */
  probes: Probes;
}
