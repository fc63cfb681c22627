// Server-side hot-path crypto through node:crypto (present in Bun, Deno and Node): synchronous
// SHA-256 and Ed25519 signing. WebCrypto gives the same bytes but costs a thread hop per call —
// measured here at ~60 µs per digest and ~48 µs per signature against ~4 µs and ~14 µs
// (docs/performance.md). Browser and offline code keeps using WebCrypto (canonical.ts,
// signature.ts); tests check both agree.
import { createHash, createPrivateKey, sign, type KeyObject } from "node:crypto";
import { canonicalJson } from "./canonical.ts";
import type { ChainLink } from "./chain.ts";

/** "0x" + lowercase hex SHA-256 of the UTF-8 bytes of text. */
export function sha256HexSync(text: string): string {
  return "0x" + createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * chain_hash of a receipt log link (contract section 4), synchronously: the JCS text of
 * {content_hash, prev, request_id, seq, timestamp} written out (keys in JCS order, strings as
 * JSON.stringify writes them, as JCS does; seq a non-negative safe integer). chain.ts's chainHash()
 * computes the same through the general canonicaliser and WebCrypto; a test checks they agree.
 */
export function chainHashSync(link: ChainLink): string {
  if (!Number.isSafeInteger(link.seq) || link.seq < 0) throw new TypeError("chainHashSync: seq must be a non-negative safe integer");
  const prev = link.prev === null ? "null" : JSON.stringify(link.prev);
  return sha256HexSync(
    `{"content_hash":${JSON.stringify(link.content_hash)},"prev":${prev},"request_id":${JSON.stringify(link.request_id)},"seq":${link.seq},"timestamp":${JSON.stringify(link.timestamp)}}`,
  );
}

/** Lowercase hex SHA-256 without the prefix (how key secrets are stored). */
export function sha256PlainHexSync(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

export interface FastSigner {
  kid: string;
  key: KeyObject;
  /** The base64url protected header, fixed per key. */
  header: string;
}

export function fastSigner(kid: string, privateJwk: JsonWebKey): FastSigner {
  const { kty, crv, x, d } = privateJwk;
  const key = createPrivateKey({ key: { kty, crv, x, d } as never, format: "jwk" });
  return { kid, key, header: Buffer.from(JSON.stringify({ alg: "EdDSA", kid })).toString("base64url") };
}

const signingInput = (value: unknown, signer: FastSigner) => `${signer.header}.${Buffer.from(canonicalJson(value), "utf8").toString("base64url")}`;

/** A compact JWS (EdDSA) whose payload bytes are exactly the JCS form of value. */
export function signCanonicalSync(value: unknown, signer: FastSigner): string {
  const input = signingInput(value, signer);
  return `${input}.${sign(null, Buffer.from(input, "ascii"), signer.key).toString("base64url")}`;
}

/**
 * The same JWS (Ed25519 is deterministic: the same bytes as signCanonicalSync), signed on the
 * runtime's thread pool: node:crypto's sign() with a callback. The calling thread keeps ~3.5 µs of
 * the ~10-20 µs a signature costs, and the pool spends ~5 µs more than signing here would: worth
 * it only while the calling thread is saturated and another core is not (ReceiptSigner,
 * docs/performance.md section 28). No JavaScript heap of its own, unlike a worker.
 */
export function signCanonical(value: unknown, signer: FastSigner): Promise<string> {
  const input = signingInput(value, signer);
  return new Promise((resolve, reject) =>
    sign(null, Buffer.from(input, "ascii"), signer.key, (err, signature) => (err ? reject(err) : resolve(`${input}.${signature.toString("base64url")}`))),
  );
}
