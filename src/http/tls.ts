// TLS material for the HTTPS listener (docs/deployment.md: HTTPS and configuration).
//
// Operators either point TLS_CERT / TLS_KEY at PEM files, or get a self-signed development
// certificate that is created once under DATA_DIR and reused, so a browser exception or a
// pinned `ca` keeps working across restarts.

import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

// @peculiar/x509 uses tsyringe, which refuses to load without the reflect-metadata polyfill.
import "reflect-metadata";

export type TlsSource = "configured" | "dev-existing" | "dev-created";

export interface LoadTlsOptions {
  dataDir: string;
  certFile?: string;
  keyFile?: string;
  log: (event: string, fields?: Record<string, unknown>) => void;
}

export interface TlsMaterial {
  cert: string;
  key: string;
  source: TlsSource;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export async function loadTls(opts: LoadTlsOptions): Promise<TlsMaterial> {
  // An empty environment variable counts as unset, like the other settings (README, Configuration).
  const certFile = opts.certFile || undefined;
  const keyFile = opts.keyFile || undefined;
  if (certFile && keyFile) {
    const [cert, key] = await Promise.all([readFile(certFile, "utf8"), readFile(keyFile, "utf8")]);
    return { cert, key, source: "configured" };
  }
  if (certFile || keyFile) {
    // Silently falling back to the dev certificate would hide a deployment mistake.
    throw new Error(
      `TLS_CERT and TLS_KEY must be set together (got only ${certFile ? "TLS_CERT" : "TLS_KEY"})`,
    );
  }

  const dir = join(opts.dataDir, "tls");
  const certPath = join(dir, "dev-cert.pem");
  const keyPath = join(dir, "dev-key.pem");

  const [cert, key] = await Promise.all([readIfExists(certPath), readIfExists(keyPath)]);
  if (cert !== undefined && key !== undefined) return { cert, key, source: "dev-existing" };

  // Either nothing exists yet or a half-written pair: a lone key or cert is useless, so both are
  // regenerated rather than trying to match a new half to the old one.
  const created = await createSelfSigned();
  await mkdir(dir, { recursive: true });
  // Key first: a crash between the two writes then leaves a key without a cert (regenerated
  // next start), never a cert whose key is missing.
  await writeAtomic(keyPath, created.key, 0o600);
  await writeAtomic(certPath, created.cert, 0o644);
  opts.log("tls_dev_certificate_created", { path: certPath });
  return { ...created, source: "dev-created" };
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err; // permission problems etc. must surface, not trigger a silent regeneration
  }
}

// Write to a temporary name and rename, so a crash mid-write never leaves a truncated PEM that
// the next start would accept as "existing". The mode is set at creation of the temp file, so the
// private key is never readable by others, even briefly, and an old file's looser mode is replaced.
async function writeAtomic(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, data, { mode });
  await rename(tmp, path);
}

async function createSelfSigned(): Promise<{ cert: string; key: string }> {
  // Loaded lazily: a configured certificate never needs it.
  const x509 = await import("@peculiar/x509");
  x509.cryptoProvider.set(crypto);
  const alg = { name: "ECDSA", namedCurve: "P-256" } as const;
  const keys = (await crypto.subtle.generateKey(alg, true, ["sign", "verify"])) as CryptoKeyPair;

  // 16 random bytes: the top bit cleared so the DER INTEGER stays positive without a pad byte, the
  // next one set so the first byte is never zero (DER would drop it: a 15-byte serial, 1 time in 128).
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] = (serial[0]! & 0x3f) | 0x40;

  // Backdated an hour so a client whose clock runs a little behind does not see "not yet valid".
  const notBefore = new Date(Date.now() - 60 * 60 * 1000);
  const notAfter = new Date(notBefore.getTime() + 365 * DAY_MS);

  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(serial).toString("hex"),
    name: "CN=localhost",
    notBefore,
    notAfter,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    keys,
    extensions: [
      // Clients check the SAN, not the CN; cover the default HOST and its IPv6 twin.
      new x509.SubjectAlternativeNameExtension([
        { type: "dns", value: "localhost" },
        { type: "ip", value: "127.0.0.1" },
        { type: "ip", value: "::1" },
      ]),
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });

  const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  return { cert: cert.toString("pem") + "\n", key: toPem("PRIVATE KEY", pkcs8) };
}

function toPem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString("base64");
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}
