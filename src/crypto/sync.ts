// Server-side hashing and signing through node:crypto (present in Bun, Deno and Node), done
// synchronously (or, for a signature on a saturated thread, on the thread pool): WebCrypto gives
// the same bytes but costs a hop to another thread per call.
// Browser and offline code keeps using WebCrypto (canonical.ts, signature.ts); tests check that
// both agree.
import { createHash, createPrivateKey, sign, type KeyObject } from "node:crypto";
import { canonicalJson } from "./canonical.ts";

/** "0x" + lowercase hex SHA-256 of the UTF-8 bytes of text. */
export function sha256HexSync(text: string): string {
  return "0x" + createHash("sha256").update(text, "utf8").digest("hex");
}

/** SHA-256 of bytes. */
export function sha256BytesSync(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(bytes).digest());
}

/** Lowercase hex SHA-256 without the prefix (how key secrets are stored). */
export function sha256PlainHexSync(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

export interface SyncSigner {
  kid: string;
  key: KeyObject;
  /** The base64url protected header, fixed per key. */
  header: string;
}

export function syncSigner(kid: string, privateJwk: JsonWebKey): SyncSigner {
  const { kty, crv, x, d } = privateJwk;
  const key = createPrivateKey({ key: { kty, crv, x, d } as never, format: "jwk" });
  return { kid, key, header: Buffer.from(JSON.stringify({ alg: "EdDSA", kid })).toString("base64url") };
}

const signingInput = (value: unknown, signer: SyncSigner) => `${signer.header}.${Buffer.from(canonicalJson(value), "utf8").toString("base64url")}`;

/** A compact JWS (EdDSA) whose payload bytes are exactly the JCS form of value. */
export function signCanonicalSync(value: unknown, signer: SyncSigner): string {
  const input = signingInput(value, signer);
  return `${input}.${sign(null, Buffer.from(input, "ascii"), signer.key).toString("base64url")}`;
}

/**
 * The same JWS (Ed25519 is deterministic: the same bytes), signed on the runtime's thread pool by
 * node:crypto's sign() with a callback: the calling thread keeps only the encoding, another core
 * does the signature. Worth it only while the calling thread is the bound (ThreadLoad).
 */
export function signCanonicalPooled(value: unknown, signer: SyncSigner): Promise<string> {
  const input = signingInput(value, signer);
  return new Promise((resolve, reject) =>
    sign(null, Buffer.from(input, "ascii"), signer.key, (err, signature) => (err ? reject(err) : resolve(`${input}.${signature.toString("base64url")}`))),
  );
}

/** A plain Ed25519 signature of bytes (for formats other than JWS, such as a signed note). */
export function signBytesSync(bytes: Uint8Array, signer: SyncSigner): Uint8Array {
  return new Uint8Array(sign(null, bytes, signer.key));
}
