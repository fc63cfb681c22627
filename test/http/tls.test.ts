import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadTls } from "../../src/http/tls.ts";

// Imported after tls.ts on purpose: tls.ts installs the reflect-metadata shim x509 needs.
const x509 = await import("@peculiar/x509");

const tmpDirs: string[] = [];
function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "warden-tls-"));
  tmpDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
});

type LogCall = [string, Record<string, unknown> | undefined];
function recorder() {
  const calls: LogCall[] = [];
  return { calls, log: (event: string, fields?: Record<string, unknown>) => void calls.push([event, fields]) };
}

describe("dev certificate", async () => {
  const dataDir = tmpDir();
  const rec = recorder();
  const first = await loadTls({ dataDir, log: rec.log });
  const certPath = path.join(dataDir, "tls", "dev-cert.pem");
  const keyPath = path.join(dataDir, "tls", "dev-key.pem");

  test("first call creates both files, key is private", () => {
    expect(first.source).toBe("dev-created");
    expect(fs.readFileSync(certPath, "utf8")).toBe(first.cert);
    expect(fs.readFileSync(keyPath, "utf8")).toBe(first.key);
    expect(fs.statSync(keyPath).mode & 0o777).toBe(0o600);
    expect(first.key).toStartWith("-----BEGIN PRIVATE KEY-----\n");
    for (const line of first.key.trim().split("\n")) expect(line.length).toBeLessThanOrEqual(64);
    expect(fs.readdirSync(path.dirname(certPath)).sort()).toEqual(["dev-cert.pem", "dev-key.pem"]);
  });

  test("second call reuses the files and logs nothing", async () => {
    const second = await loadTls({ dataDir, log: rec.log });
    expect(second).toEqual({ cert: first.cert, key: first.key, source: "dev-existing" });
    expect(rec.calls).toEqual([["tls_dev_certificate_created", { path: certPath }]]);
  });

  test("certificate has the expected names and validity", () => {
    const cert = new x509.X509Certificate(first.cert);
    expect(cert.subject).toBe("CN=localhost");
    const san = cert.getExtension(x509.SubjectAlternativeNameExtension)!;
    expect(san.names.toJSON()).toEqual([
      { type: "dns", value: "localhost" },
      { type: "ip", value: "127.0.0.1" },
      { type: "ip", value: "::1" },
    ]);
    expect(cert.getExtension(x509.BasicConstraintsExtension)!.ca).toBe(false);
    expect(cert.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toEqual([x509.ExtendedKeyUsage.serverAuth]);
    const now = Date.now();
    expect(cert.notBefore.getTime()).toBeLessThan(now);
    expect(cert.notAfter.getTime()).toBeGreaterThan(now + 364 * 24 * 3600 * 1000);
    expect(cert.serialNumber.length).toBe(32); // 16 bytes, hex
  });

  test("a lone cert (key missing) makes both be regenerated", async () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, "tls"));
    fs.writeFileSync(path.join(dir, "tls", "dev-cert.pem"), first.cert);
    const r = recorder();
    const res = await loadTls({ dataDir: dir, log: r.log });
    expect(res.source).toBe("dev-created");
    expect(res.cert).not.toBe(first.cert);
    expect(fs.readFileSync(path.join(dir, "tls", "dev-cert.pem"), "utf8")).toBe(res.cert);
    expect(r.calls.length).toBe(1);
  });

  test("Bun.serve accepts the pair and clients can connect", async () => {
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      tls: { cert: first.cert, key: first.key },
      fetch: () => Response.json({ ok: true }),
    });
    try {
      const insecure = await fetch(`https://127.0.0.1:${server.port}/`, { tls: { rejectUnauthorized: false } });
      expect(insecure.status).toBe(200);
      expect(await insecure.json()).toEqual({ ok: true });

      // Trusting the self-signed leaf as its own CA, with hostname verification on.
      const pinned = await fetch(`https://localhost:${server.port}/`, { tls: { ca: first.cert } });
      expect(pinned.status).toBe(200);
      expect(await pinned.json()).toEqual({ ok: true });

      // Control: verification really is on, so the pinned success above means something.
      await expect(fetch(`https://localhost:${server.port}/`)).rejects.toThrow();
    } finally {
      server.stop(true);
    }
  });
});

describe("configured certificate", async () => {
  // Any valid pair will do; borrow one from the dev generator.
  const pair = await loadTls({ dataDir: tmpDir(), log: () => {} });
  const dir = tmpDir();
  const certFile = path.join(dir, "cert.pem");
  const keyFile = path.join(dir, "key.pem");
  fs.writeFileSync(certFile, pair.cert);
  fs.writeFileSync(keyFile, pair.key);

  test("both files given: returned as is, nothing created or logged", async () => {
    const dataDir = tmpDir();
    const r = recorder();
    const res = await loadTls({ dataDir, certFile, keyFile, log: r.log });
    expect(res).toEqual({ cert: pair.cert, key: pair.key, source: "configured" });
    expect(r.calls).toEqual([]);
    expect(fs.existsSync(path.join(dataDir, "tls"))).toBe(false);
  });

  test("only one of the two given: rejects", async () => {
    await expect(loadTls({ dataDir: tmpDir(), certFile, log: () => {} })).rejects.toThrow(/TLS_CERT and TLS_KEY/);
    await expect(loadTls({ dataDir: tmpDir(), keyFile, log: () => {} })).rejects.toThrow(/TLS_CERT and TLS_KEY/);
  });

  test("a missing configured file rejects instead of falling back", async () => {
    await expect(
      loadTls({ dataDir: tmpDir(), certFile: path.join(dir, "nope.pem"), keyFile, log: () => {} }),
    ).rejects.toThrow();
  });
});
