// Configuration from the environment (contract section 10), read once at start.
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  tlsCert?: string;
  tlsKey?: string;
  trustProxy: boolean;
  jwtSecret?: string;
  smtpUrl?: string;
  publicUrl: string;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  bcryptCost: number;
}

const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const port = intFrom(env.PORT, 8443, "PORT", 0, 65535);
  const host = env.HOST || "127.0.0.1";
  const logLevel = (env.LOG_LEVEL || "info") as Config["logLevel"];
  if (!LOG_LEVELS.includes(logLevel)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
  return {
    port,
    host,
    dataDir: env.DATA_DIR || "./data",
    databaseUrl: env.DATABASE_URL || undefined,
    tlsCert: env.TLS_CERT || undefined,
    tlsKey: env.TLS_KEY || undefined,
    trustProxy: env.TRUST_PROXY === "1" || env.TRUST_PROXY === "true",
    jwtSecret: env.JWT_SECRET || undefined,
    smtpUrl: env.SMTP_URL || undefined,
    publicUrl: (env.PUBLIC_URL || `https://${host.includes(":") ? `[${host}]` : host}:${port}`).replace(/\/+$/, ""),
    logLevel,
    // bcrypt cost 12 in production; tests lower it (BCRYPT_COST=4) to stay fast.
    bcryptCost: intFrom(env.BCRYPT_COST, 12, "BCRYPT_COST", 4, 15),
  };
}

function intFrom(raw: string | undefined, fallback: number, name: string, min: number, max: number): number {
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}`);
  return n;
}
