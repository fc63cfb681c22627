// Configuration from the environment (README, Configuration), read once at start.
import { availableParallelism } from "node:os";

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  /** Connections each instance keeps to DATABASE_URL (docs/deployment.md). */
  databasePoolSize?: number;
  tlsCert?: string;
  tlsKey?: string;
  trustProxy: boolean;
  jwtSecret?: string;
  /** The JWT_SECRET before the last change, while sessions and sealed secrets move to the new one (docs/deployment.md). */
  jwtSecretPrevious?: string;
  smtpUrl?: string;
  publicUrl: string;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** json (default): one JSON object a line; pretty: aligned text for a person at a terminal. */
  logFormat: "json" | "pretty";
  /**
   * The plain-HTTP listener for /metrics, /livez and /readyz; null when METRICS_ADDR=off.
   * fromDefault: METRICS_ADDR was not set, so a port already taken (a second instance on this
   * host) moves the listener to a free port instead of stopping the start.
   */
  metricsAddr: { host: string; port: number; fromDefault?: boolean } | null;
  bcryptCost: number;
  /** From: of outgoing mail. */
  mailFrom: string;
  /** How often the mail worker looks for due messages, in ms (it is also nudged on enqueue). */
  mailPollMs: number;
  /** Brute-force limits on /auth (docs/security.md). */
  rateLimits: RateLimits;
  /** How long an attempt on an email over its login ceiling waits before it is answered, in ms. */
  loginSlowdownMs: number;
  /** Password hashes (bcrypt) running at once; beyond it requests wait their turn, fairly by address. */
  passwordHashConcurrency: number;
  /** The longest a request waits for a hash before 503 unavailable with Retry-After. */
  passwordHashWaitMs: number;
  /** Receipt-log reads (checkpoints, proofs) per tenant per second, after a burst of as many; beyond, they wait their turn. */
  logReadsPerSecond: number;
  /** WEBHOOK_ALLOW_PRIVATE=1: webhooks may go to loopback, private and other non-public addresses (development). */
  webhookAllowPrivate: boolean;
  /** WEBHOOK_DELIVERY=0: this instance queues webhook deliveries but leaves them to instances that deliver. */
  webhookDelivery: boolean;
  /** APPROVAL_SWEEP=0: this instance leaves expiring due approvals to the others (every instance sweeps by default). */
  approvalSweep: boolean;
  /** NODE_EXTRA_CA_CERTS: a PEM file of certificate authorities webhook deliveries trust beside the runtime's. */
  extraCaCerts?: string;
}

/** At most `limit` hits per fixed window of `windowSeconds`. */
export interface RateRule {
  limit: number;
  windowSeconds: number;
}

export interface RateLimits {
  /** Per client address (IPv6: its /64) and password route. */
  authAddress: RateRule;
  /** Per IPv6 /48 and password route: the 65,536 /64s of one site together. */
  authNetwork: RateRule;
  /** Per (email, client address): login attempts; also per account for password changes and second-factor codes. */
  loginPair: RateRule;
  /** Per email from anywhere: beyond it attempts are slowed (loginSlowdownMs), never refused. */
  loginEmail: RateRule;
  /** Per email: reset and verification emails requested. */
  mailEmail: RateRule;
}

const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
const LOG_FORMATS = ["json", "pretty"] as const;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const port = intFrom(env.PORT, 8443, "PORT", 0, 65535);
  const host = env.HOST || "127.0.0.1";
  const logLevel = (env.LOG_LEVEL || "info") as Config["logLevel"];
  if (!LOG_LEVELS.includes(logLevel)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
  const logFormat = (env.LOG_FORMAT || "json") as Config["logFormat"];
  if (!LOG_FORMATS.includes(logFormat)) throw new Error(`LOG_FORMAT must be one of ${LOG_FORMATS.join(", ")}`);
  return {
    port,
    host,
    dataDir: env.DATA_DIR || "./data",
    databaseUrl: env.DATABASE_URL || undefined,
    databasePoolSize: intFrom(env.DATABASE_POOL_SIZE, 10, "DATABASE_POOL_SIZE", 1, 1000),
    tlsCert: env.TLS_CERT || undefined,
    tlsKey: env.TLS_KEY || undefined,
    trustProxy: env.TRUST_PROXY === "1" || env.TRUST_PROXY === "true",
    jwtSecret: env.JWT_SECRET || undefined,
    jwtSecretPrevious: previousSecret(env.JWT_SECRET_PREVIOUS, env.JWT_SECRET),
    smtpUrl: env.SMTP_URL || undefined,
    publicUrl: (env.PUBLIC_URL || `https://${host.includes(":") ? `[${host}]` : host}:${port}`).replace(/\/+$/, ""),
    logLevel,
    logFormat,
    metricsAddr: metricsAddress(env.METRICS_ADDR),
    // bcrypt cost 12 in production; tests lower it (BCRYPT_COST=4) to stay fast.
    bcryptCost: intFrom(env.BCRYPT_COST, 12, "BCRYPT_COST", 4, 15),
    mailFrom: env.MAIL_FROM || `warden <no-reply@${mailDomain(env.PUBLIC_URL, host)}>`,
    mailPollMs: intFrom(env.MAIL_POLL_MS, 1000, "MAIL_POLL_MS", 50, 3_600_000),
    rateLimits: {
      authAddress: rateFrom(env.RATE_LIMIT_AUTH_ADDRESS, "30/60", "RATE_LIMIT_AUTH_ADDRESS"),
      authNetwork: rateFrom(env.RATE_LIMIT_AUTH_NETWORK, "300/60", "RATE_LIMIT_AUTH_NETWORK"),
      loginPair: rateFrom(env.RATE_LIMIT_LOGIN_PAIR, "10/900", "RATE_LIMIT_LOGIN_PAIR"),
      loginEmail: rateFrom(env.RATE_LIMIT_LOGIN_EMAIL, "100/3600", "RATE_LIMIT_LOGIN_EMAIL"),
      mailEmail: rateFrom(env.RATE_LIMIT_MAIL_EMAIL, "5/3600", "RATE_LIMIT_MAIL_EMAIL"),
    },
    loginSlowdownMs: intFrom(env.LOGIN_SLOWDOWN_MS, 2000, "LOGIN_SLOWDOWN_MS", 0, 60_000),
    // bcrypt runs on a thread pool: a few per core keep the cores busy without a queue forming.
    passwordHashConcurrency: intFrom(env.PASSWORD_HASH_CONCURRENCY, 2 * availableParallelism(), "PASSWORD_HASH_CONCURRENCY", 1, 1024),
    passwordHashWaitMs: intFrom(env.PASSWORD_HASH_WAIT_MS, 2000, "PASSWORD_HASH_WAIT_MS", 0, 30_000),
    logReadsPerSecond: intFrom(env.LOG_READS_PER_SECOND, 100, "LOG_READS_PER_SECOND", 1, 1_000_000),
    webhookAllowPrivate: flag(env.WEBHOOK_ALLOW_PRIVATE, false, "WEBHOOK_ALLOW_PRIVATE"),
    webhookDelivery: flag(env.WEBHOOK_DELIVERY, true, "WEBHOOK_DELIVERY"),
    approvalSweep: flag(env.APPROVAL_SWEEP, true, "APPROVAL_SWEEP"),
    extraCaCerts: env.NODE_EXTRA_CA_CERTS || undefined,
  };
}

function previousSecret(previous: string | undefined, current: string | undefined): string | undefined {
  if (!previous) return undefined;
  if (!current) throw new Error("JWT_SECRET_PREVIOUS needs JWT_SECRET: it names the secret JWT_SECRET replaced");
  if (previous.length < 32) throw new Error("JWT_SECRET_PREVIOUS must be at least 32 characters");
  if (previous === current) throw new Error("JWT_SECRET_PREVIOUS must differ from JWT_SECRET");
  return previous;
}

/** 1 or true, 0 or false; unset: the default. */
function flag(raw: string | undefined, fallback: boolean, name: string): boolean {
  if (raw === undefined || raw === "") return fallback;
  if (raw === "1" || raw === "true") return true;
  if (raw === "0" || raw === "false") return false;
  throw new Error(`${name} must be 1 or 0`);
}

function intFrom(raw: string | undefined, fallback: number, name: string, min: number, max: number): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

/** "HOST:PORT" (an IPv6 host in brackets), or "off" for none. */
function listenAddress(raw: string | undefined, fallback: string, name: string): { host: string; port: number } | null {
  const value = (raw || fallback).trim();
  if (value.toLowerCase() === "off") return null;
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:\[\]]+)):(\d{1,5})$/.exec(value);
  const port = Number(match?.[3]);
  if (!match || port > 65535) throw new Error(`${name} must be HOST:PORT (for example ${fallback}, [::1]:9464) or off`);
  return { host: match[1] ?? match[2], port };
}

const METRICS_DEFAULT = "127.0.0.1:9464";

function metricsAddress(raw: string | undefined): Config["metricsAddr"] {
  const addr = listenAddress(raw, METRICS_DEFAULT, "METRICS_ADDR");
  return addr && !raw?.trim() ? { ...addr, fromDefault: true } : addr;
}

/** "N/SECONDS": at most N hits per window of SECONDS. */
function rateFrom(raw: string | undefined, fallback: string, name: string): RateRule {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(raw || fallback);
  const limit = Number(match?.[1]);
  const windowSeconds = Number(match?.[2]);
  if (!match || limit < 1 || windowSeconds < 1 || windowSeconds > 86_400 || limit > 1_000_000_000) {
    throw new Error(`${name} must be N/SECONDS, for example ${fallback} (N at least 1, SECONDS 1 to 86400)`);
  }
  return { limit, windowSeconds };
}

// A name for the sender address: PUBLIC_URL's host when it is a name, else "localhost".
function mailDomain(publicUrl: string | undefined, host: string): string {
  let name = host;
  try {
    if (publicUrl) name = new URL(publicUrl).hostname;
  } catch {
    // An unparseable PUBLIC_URL fails where links are built; the sender falls back.
  }
  return /^[a-z0-9.-]*[a-z][a-z0-9.-]*$/i.test(name) && name.includes(".") ? name.toLowerCase() : "localhost";
}
