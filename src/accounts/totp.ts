// The second factor's pure parts: TOTP (RFC 6238: SHA-1, 6 digits, 30 s steps) with otplib,
// recovery codes, and the sealing of TOTP secrets at rest (AES-256-GCM under a key derived from
// the service secret with HKDF, bound to the tenant: docs/security.md).
import { generateSecret, generateURI, verify } from "otplib";
import { hashSecret } from "../keys/secret.ts";

export const TOTP_PERIOD_SECONDS = 30;
/** A code of the step before or after the current one is still accepted (clock drift). */
const TOLERANCE_SECONDS = TOTP_PERIOD_SECONDS;
const ISSUER = "warden";
export const RECOVERY_CODE_COUNT = 10;

/** A new base32 secret of 160 bits and the otpauth:// URL an authenticator app reads. */
export function newTotpSecret(email: string): { secret: string; otpauth_url: string } {
  const secret = generateSecret({ length: 20 });
  return { secret, otpauth_url: generateURI({ issuer: ISSUER, label: email, secret }) };
}

/** A second-factor code as typed: six digits are a TOTP code, anything else a recovery code. */
export function isTotpCode(code: string): boolean {
  return /^\d{6}$/.test(code.trim());
}

/** The 30 s step the code belongs to when it is right at `now` (within one step), else null. */
export async function totpStep(secret: string, code: string, now: Date): Promise<number | null> {
  if (!isTotpCode(code)) return null;
  const epoch = Math.floor(now.getTime() / 1000);
  const result = await verify({ secret, token: code.trim(), epoch, epochTolerance: TOLERANCE_SECONDS });
  // `delta`: how many steps from the current one the code matched.
  return result.valid ? Math.floor(epoch / TOTP_PERIOD_SECONDS) + result.delta : null;
}

const RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";

/** Ten codes like `k3mp9-x2qaz-7hd4w-ne8rt`: 20 characters of a 31-letter alphabet, about 99 bits each. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from(crypto.getRandomValues(new Uint32Array(20)), (n) => RECOVERY_ALPHABET[n % RECOVERY_ALPHABET.length]).join("");
    return chars.match(/.{5}/g)!.join("-");
  });
}

/** What is stored of a recovery code: the SHA-256 of its letters, case and dashes ignored. */
export function recoveryCodeHash(code: string): Promise<string> {
  return hashSecret(code.toLowerCase().replace(/[^a-z0-9]/g, ""));
}

/** The purpose (HKDF info) of the SecretBox that seals TOTP secrets, each with its tenant id as context. */
export const TOTP_SECRET_PURPOSE = "warden totp secret v1";
