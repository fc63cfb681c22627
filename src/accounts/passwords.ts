// Password rules (spec 5.6, contract section 2) and bcrypt hashing (spec 5.7).
import { AppError } from "../http/errors.ts";
import { COMMON_PASSWORDS } from "./common-passwords.ts";
import { bcryptHash, bcryptVerify } from "../runtime.ts";

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

/** Throws the contract's error for a password that may not be set. Lengths count characters. */
export function assertAcceptablePassword(password: string): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN) throw new AppError("password_too_short", `The password must be at least ${PASSWORD_MIN} characters.`);
  if (length > PASSWORD_MAX) throw new AppError("password_too_long", `The password must be at most ${PASSWORD_MAX} characters.`);
  if (COMMON_PASSWORDS.has(password.toLowerCase())) {
    throw new AppError("password_too_common", "This password is one of the most common ones; choose another.");
  }
}

// Bun's bcrypt pre-hashes inputs over 72 bytes with SHA-512, so long passwords keep all their
// characters significant instead of being cut at bcrypt's 72-byte limit (src/runtime.ts does the
// same on Deno).
export function hashPassword(password: string, cost: number): Promise<string> {
  return bcryptHash(password, cost);
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return bcryptVerify(password, hash);
}
