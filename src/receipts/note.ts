// The tree head as a standard checkpoint (c2sp.org/tlog-checkpoint) in a signed note
// (c2sp.org/signed-note), so that verifiers such as Go's golang.org/x/mod/sumdb/note check it
// without knowing warden. WebCrypto only: `warden verify --proof` and the console's in-browser
// check verify notes with this same code; the service signs with its receipt key and hashes the
// key id with node:crypto (ReceiptSigner.signNote), the Go verifier test checking that both agree.
import { bytesToHex, hexToBytes } from "../crypto/canonical.ts";

// Ed25519's algorithm byte in signed-note key hashes and verifier keys.
const ED25519 = 0x01;
const encoder = new TextEncoder();

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

function unbase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function base64urlToBytes(text: string): Uint8Array | undefined {
  const padded = text.replace(/-/g, "+").replace(/_/g, "/");
  return unbase64(padded + "=".repeat((4 - (padded.length % 4)) % 4));
}

/** The log's name in its checkpoints: PUBLIC_URL's host (and port), then /receipts/<tenant_id>. */
export function checkpointOrigin(publicUrl: string, tenantId: string): string {
  return `${new URL(publicUrl).host}/receipts/${tenantId}`;
}

/** The checkpoint body: origin, tree size and the standard base64 of the root hash, one per line. */
export function checkpointBody(origin: string, treeSize: number, rootHash: string): string {
  return `${origin}\n${treeSize}\n${base64(hexToBytes(rootHash))}\n`;
}

/** What a key id hashes: name ‖ 0x0A ‖ 0x01 ‖ public key. */
export function noteKeyIdInput(name: string, publicKey: Uint8Array): Uint8Array {
  const nameBytes = encoder.encode(name);
  const input = new Uint8Array(nameBytes.length + 2 + publicKey.length);
  input.set(nameBytes);
  input.set([0x0a, ED25519], nameBytes.length);
  input.set(publicKey, nameBytes.length + 2);
  return input;
}

/** The key id: the first 4 bytes of SHA-256(noteKeyIdInput). */
export async function noteKeyId(name: string, publicKey: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", noteKeyIdInput(name, publicKey) as Uint8Array<ArrayBuffer>)).slice(0, 4);
}

/** The verifier key `<name>+<8 hex key id>+<base64 of 0x01 ‖ public key>`. */
export function noteVerifierKey(name: string, keyId: Uint8Array, publicKey: Uint8Array): string {
  return `${name}+${bytesToHex(keyId).slice(2)}+${base64(Uint8Array.of(ED25519, ...publicKey))}`;
}

/** The note: its text, a blank line, and one signature line `— <name> <base64 of key id ‖ signature>`. */
export function signedNote(text: string, name: string, keyId: Uint8Array, signature: Uint8Array): string {
  return `${text}\n\u2014 ${name} ${base64(Uint8Array.of(...keyId, ...signature))}\n`;
}

/** The raw 32-byte public key of an Ed25519 JWK, or undefined. */
export function ed25519PublicKey(jwk: JsonWebKey): Uint8Array | undefined {
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.x !== "string") return undefined;
  const key = base64urlToBytes(jwk.x);
  return key?.length === 32 ? key : undefined;
}

/**
 * Does `note` hold exactly the checkpoint {origin ending in /receipts/<tenant_id>, tree_size,
 * root_hash}, signed under its origin by one of the JWKS keys? Never throws.
 */
export async function verifyCheckpointNote(
  note: unknown,
  jwks: { keys: JsonWebKey[] },
  expected: { tenant_id: string; tree_size: number; root_hash: string },
): Promise<boolean> {
  try {
    if (typeof note !== "string") return false;
    const split = note.lastIndexOf("\n\n");
    if (split < 0 || !note.endsWith("\n")) return false;
    const text = note.slice(0, split + 1);
    const origin = text.slice(0, text.indexOf("\n"));
    if (!origin.endsWith(`/receipts/${expected.tenant_id}`) || text !== checkpointBody(origin, expected.tree_size, expected.root_hash)) return false;
    for (const line of note.slice(split + 2, -1).split("\n")) {
      const m = /^\u2014 (\S+) (\S+)$/.exec(line);
      const blob = m && m[1] === origin ? unbase64(m[2]) : undefined;
      if (!blob || blob.length !== 4 + 64) continue;
      for (const jwk of jwks.keys) {
        const publicKey = ed25519PublicKey(jwk);
        if (!publicKey || bytesToHex(await noteKeyId(origin, publicKey)) !== bytesToHex(blob.slice(0, 4))) continue;
        const key = await crypto.subtle.importKey("raw", publicKey as Uint8Array<ArrayBuffer>, { name: "Ed25519" }, false, ["verify"]);
        if (await crypto.subtle.verify({ name: "Ed25519" }, key, blob.slice(4) as Uint8Array<ArrayBuffer>, encoder.encode(text))) return true;
      }
    }
    return false;
  } catch {
    return false;
  }
}
