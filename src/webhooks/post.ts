// One attempt of a delivery over the wire: a POST to the address the target check resolved,
// with the URL's own host name for TLS (SNI, certificate check) and for the Host header. No
// redirect is followed (node:https follows none: a 3xx is an answer like any other), the whole
// attempt ends at a deadline, and at most `maxResponseBytes` of the answer are read before the
// connection is cut: a slow or endless receiver holds a worker no longer than the deadline.
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { isIP } from "node:net";
import { rootCertificates } from "node:tls";
import { bareHost, type ResolvedAddress } from "./target.ts";

export interface PostLimits {
  /** The longest an attempt lasts, name resolution included. */
  timeoutMs: number;
  /** The most of an answer read; beyond it the connection is cut (the status still counts). */
  maxResponseBytes: number;
}

export const DEFAULT_LIMITS: PostLimits = { timeoutMs: 10_000, maxResponseBytes: 64 * 1024 };

/** An attempt that got no HTTP answer: unreachable, refused by TLS, timed out. */
export class NoAnswer extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NoAnswer";
  }
}

/**
 * The certificate authorities deliveries trust: the runtime's own, plus those of a
 * NODE_EXTRA_CA_CERTS file (a receiver with a private CA), passed explicitly so that every runtime
 * (Bun, Node, Deno) reads the same list. Undefined when there is no such file: the runtime's default.
 */
export function trustedAuthorities(extraCaFile: string | undefined): string[] | undefined {
  if (!extraCaFile) return undefined;
  return [...rootCertificates, readFileSync(extraCaFile, "utf8")];
}

/** POSTs body to url at the resolved address; answers the HTTP status. Throws NoAnswer. */
export function postOnce(
  url: URL,
  target: ResolvedAddress,
  headers: Record<string, string>,
  body: string,
  opts: { ms: number; maxResponseBytes: number; ca?: string[] },
): Promise<{ status: number; truncated: boolean }> {
  const host = bareHost(url);
  return new Promise((resolve, reject) => {
    let settled = false;
    let status: number | undefined;
    let truncated = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      // Once the status line arrived the answer counts, however its body ended.
      if (status !== undefined) resolve({ status, truncated });
      else reject(err ?? new NoAnswer("the connection closed without an answer"));
    };
    const req = request({
      host: target.address,
      family: target.family,
      port: url.port ? Number(url.port) : 443,
      method: "POST",
      path: `${url.pathname}${url.search}`,
      // TLS checks the certificate against the name in the URL (an IP literal sends no SNI).
      servername: isIP(host) ? undefined : host,
      headers: { ...headers, host: url.host, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
      ca: opts.ca,
      agent: false,
    });
    const timer = setTimeout(() => settle(new NoAnswer(`no answer within ${Math.round(opts.ms / 100) / 10} s`)), Math.max(opts.ms, 0));
    req.on("response", (res) => {
      status = res.statusCode ?? 0;
      let read = 0;
      res.on("data", (chunk: Buffer) => {
        read += chunk.length;
        if (read > opts.maxResponseBytes) {
          truncated = true;
          settle();
        }
      });
      res.on("end", () => settle());
      res.on("error", () => settle());
      res.on("close", () => settle());
    });
    req.on("error", (err) => settle(new NoAnswer(describe(err))));
    req.end(body);
  });
}

function describe(err: Error): string {
  const code = (err as { code?: string }).code;
  return code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
}
