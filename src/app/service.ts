// Builds the running service from configuration: database, migrations, keys, the app.
import { SignupEmails } from "../accounts/email.ts";
import { hashPassword, PasswordHasher, PasswordRules } from "../accounts/passwords.ts";
import { serviceSecret, Sessions } from "../accounts/sessions.ts";
import { TOTP_SECRET_PURPOSE } from "../accounts/totp.ts";
import { resealTotpSecrets } from "../accounts/mfa.ts";
import { SecretBox } from "../crypto/secret-box.ts";
import type { Config } from "../config.ts";
import { openDb, type Db } from "../db/index.ts";
import { migrate } from "../db/migrate.ts";
import { randomBase62 } from "../ids.ts";
import { createLogger, type Logger } from "../log.ts";
import { ReceiptSigner, signingKeyBox } from "../receipts/signer.ts";
import { ReceiptAppender } from "../receipts/append.ts";
import { TenantTurns } from "../receipts/turns.ts";
import { UsageLimits } from "../usage/limits.ts";
import { KeyAuthenticator } from "../keys/authenticate.ts";
import { EntityLookup } from "../entities/lookup.ts";
import { startExpiringKeysSweeper } from "../keys/expiring.ts";
import { PolicyVersions } from "../policies/store.ts";
import { PresetOutcomes } from "../simulation/simulate.ts";
import { createTransport } from "../mail/transport.ts";
import { startMailer } from "../mail/worker.ts";
import { MAIL_TOKEN_PURPOSE, MailTemplates } from "../mail/templates.ts";
import { ACCOUNT_MAIL } from "../accounts/mail.ts";
import { MEMBER_MAIL } from "../members/mail.ts";
import { APPROVAL_MAIL } from "../approvals/mail.ts";
import { PLAN_MAIL } from "../plans/mail.ts";
import { pendingCount } from "../outbox/queue.ts";
import { Metrics } from "../observability/metrics.ts";
import { Probes } from "../observability/probes.ts";
import { startIdempotencySweeper } from "../http/idempotency.ts";
import { AuditTrail } from "../audit/trail.ts";
import { startAuditOutbox } from "../audit/outbox.ts";
import { Approvals } from "../approvals/approvals.ts";
import { ApprovalWaiters, startApprovalSweeper } from "../approvals/waiters.ts";
import { resealWebhookSecrets, WEBHOOK_SECRET_PURPOSE } from "../webhooks/manage.ts";
import { trustedAuthorities, type PostLimits } from "../webhooks/post.ts";
import { systemLookup, WebhookTargets, type Lookup } from "../webhooks/target.ts";
import { NO_WEBHOOK_WORKER, startWebhookWorker } from "../webhooks/worker.ts";
import { OAuthTokens } from "../oauth/tokens.ts";
import { OAuthClients } from "../oauth/clients.ts";
import { GATEWAY_SECRET_PURPOSE, resealGatewaySecrets } from "../gateways/manage.ts";
import { createApp, type App } from "./app.ts";
import type { Deps } from "./deps.ts";
import pkg from "../../package.json" with { type: "json" };

export const VERSION: string = pkg.version;

/** How often stored Idempotency-Key responses past their 24 hours are deleted. */
const IDEMPOTENCY_SWEEP_MS = 10 * 60_000;
/** How often keys coming within 7 days or 1 day of their expiry are looked for (key.expiring). */
const KEYS_EXPIRING_SWEEP_MS = 60_000;
/** How often operators' queued audit events are looked for (signed and appended): within a second of their commit. */
const AUDIT_OUTBOX_POLL_MS = 1_000;
/** How often pending approvals past their expiry are expired (with their signed outcome). */
const APPROVAL_SWEEP_MS = 1_000;
/** How often due webhook deliveries are looked for (retries, and events other instances or procedures queued). */
const WEBHOOK_POLL_MS = 1_000;

export interface Service extends App {
  deps: Deps;
  close(): Promise<void>;
}

/**
 * Opens (or takes) the database, applies migrations and wires the app. Tests also pass
 * `webhookLookup` (host names to addresses, instead of the system's resolver), `webhookLimits` (an
 * attempt's deadline and answer cap) and `gatewayApprovalWaitMs` (how long a gateway's call waits
 * for an approval).
 */
export async function createService(
  config: Config,
  opts: { db?: Db; log?: Logger; now?: () => Date; webhookLookup?: Lookup; webhookLimits?: PostLimits; gatewayApprovalWaitMs?: number } = {},
): Promise<Service> {
  const log = opts.log ?? createLogger(config.logLevel, undefined, config.logFormat);
  const db = opts.db ?? (await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize }));
  const applied = await migrate(db);
  if (applied.length) log.info("migrations_applied", { versions: applied });
  const dummyPasswordHash = hashPassword(randomBase62(24), config.bcryptCost);
  const [secret, keys, entities] = await Promise.all([serviceSecret(db, config.jwtSecret), KeyAuthenticator.open(db), EntityLookup.open(db)]);
  const previous = config.jwtSecretPrevious;
  const [sessions, totpSecrets, mailTokens, webhookSecrets, gatewaySecrets, signer] = await Promise.all([
    Sessions.open(db, secret, previous),
    SecretBox.derive(secret, TOTP_SECRET_PURPOSE, previous),
    SecretBox.derive(secret, MAIL_TOKEN_PURPOSE, previous),
    SecretBox.derive(secret, WEBHOOK_SECRET_PURPOSE, previous),
    SecretBox.derive(secret, GATEWAY_SECRET_PURPOSE, previous),
    signingKeyBox(secret, previous).then((box) => ReceiptSigner.open(db, box, log)),
  ]);
  // JWT_SECRET changed: what the previous one sealed moves under the new one before it is dropped.
  if (previous) {
    log.info("totp_secrets_resealed", await resealTotpSecrets(db, totpSecrets));
    log.info("webhook_secrets_resealed", await resealWebhookSecrets(db, webhookSecrets));
    log.info("gateway_secrets_resealed", await resealGatewaySecrets(db, gatewaySecrets));
  }
  const templates = new MailTemplates(ACCOUNT_MAIL, MEMBER_MAIL, PLAN_MAIL, APPROVAL_MAIL);
  const mail = startMailer({ db, log, transport: createTransport(config, log), templates, ctx: { publicUrl: config.publicUrl }, pollMs: config.mailPollMs, tokens: mailTokens });
  const sweeper = startIdempotencySweeper({ db, log }, IDEMPOTENCY_SWEEP_MS);
  const expiringKeys = startExpiringKeysSweeper({ db, log }, KEYS_EXPIRING_SWEEP_MS);
  const now = opts.now ?? (() => new Date());
  const webhookTargets = new WebhookTargets(opts.webhookLookup ?? systemLookup, config.webhookAllowPrivate);
  const webhooks = config.webhookDelivery
    ? startWebhookWorker({
        db,
        log,
        targets: webhookTargets,
        secrets: webhookSecrets,
        pollMs: WEBHOOK_POLL_MS,
        now,
        ca: trustedAuthorities(config.extraCaCerts),
        limits: opts.webhookLimits,
        userAgent: `warden-webhooks/${VERSION}`,
      })
    : NO_WEBHOOK_WORKER;
  const metrics = new Metrics({ mailOutboxPending: () => pendingCount(db, "mail"), webhookOutboxPending: () => pendingCount(db, "webhook") });
  const audit = new AuditTrail(db, signer, now);
  const auditOutbox = startAuditOutbox({ db, audit, log, pollMs: AUDIT_OUTBOX_POLL_MS });
  const approvals = new Approvals({ db, signer, now, log, committed: () => (mail.nudge(), webhooks.nudge()) });
  const approvalWaiters = await ApprovalWaiters.open(db);
  // Expiry happens on time even when nobody asks: each second, the due approvals expire.
  // Not in tests' services: one whose clock runs ahead would expire every other test's approvals.
  const approvalSweeper = config.approvalSweep
    ? startApprovalSweeper(() => approvals.expireDue(), APPROVAL_SWEEP_MS, (err) => log.warn("approval_sweep_failed", { error: String(err) }))
    : { stop: async () => {} };
  // On a Citus coordinator the appender batches by tenant (docs/scaling.md): read once, at start.
  const citus = db.kind === "postgres" && (await db.one("migrations/citus"))?.citus === true;
  const receipts = new ReceiptAppender(db, signer, now, metrics, { citus });
  const deps: Deps = {
    config,
    db,
    log,
    sessions,
    keys,
    entities,
    policies: new PolicyVersions(db),
    presetOutcomes: new PresetOutcomes(),
    signer,
    receipts,
    usageLimits: new UsageLimits(db, receipts, signer, metrics),
    audit,
    auditOutbox,
    approvals,
    approvalWaiters,
    logReads: new TenantTurns(config.logReadsPerSecond),
    dummyPasswordHash,
    passwords: new PasswordHasher(config.bcryptCost, config.passwordHashConcurrency, config.passwordHashWaitMs),
    passwordRules: new PasswordRules(),
    signupEmails: new SignupEmails(),
    totpSecrets,
    mailTokens,
    version: VERSION,
    now,
    mail,
    webhookSecrets,
    webhookTargets,
    webhooks,
    accessTokens: new OAuthTokens(db, audit, config.publicUrl, now),
    oauthClients: new OAuthClients(db, webhookTargets, { ca: trustedAuthorities(config.extraCaCerts) }),
    gatewaySecrets,
    gatewayApprovalWaitMs: opts.gatewayApprovalWaitMs,
    metrics,
    probes: new Probes(() => db.query("system/ping")),
  };
  const app = createApp(deps);
  const close = async () => {
    // The outbox workers first: each finishes its batch while the database is still open.
    await Promise.all([mail.stop(), webhooks.stop(), sweeper.stop(), expiringKeys.stop(), auditOutbox.stop(), approvalSweeper.stop()]);
    metrics.close();
    if (!opts.db) await db.close();
  };
  return { ...app, deps, close };
}
