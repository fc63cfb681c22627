// One-time tokens for verification and reset links (the spec's Authentication and Limits: 24 hours, stored as SHA-256): 256 bits from the CSPRNG,
// base64url so they travel in a URL unescaped. The database keeps only their SHA-256
// (auth_token_digest() in sql/schema), and decides validity, expiry and single use.

export type TokenPurpose = "verify_email" | "reset_password";
export type TokenOutcome = "valid" | "invalid_token" | "token_expired" | "token_used";

export function newToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** The error message of each refusal, the same as the database's (src/http/errors.ts, WA001-3). */
export const TOKEN_MESSAGES: Record<Exclude<TokenOutcome, "valid">, string> = {
  invalid_token: "This link is not valid. Request a new one.",
  token_expired: "This link has expired. Request a new one.",
  token_used: "This link has already been used.",
};
