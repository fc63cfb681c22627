// One-time tokens for verification and reset links (spec 5.5, 5.7): 256 bits from the CSPRNG,
// base64url so they travel in a URL unescaped. The database keeps only their SHA-256
// (auth_token_digest() in sql/schema), and decides validity, expiry and single use.

export type TokenPurpose = "verify_email" | "reset_password";
export type TokenOutcome = "valid" | "invalid_token" | "token_expired" | "token_used";

export function newToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}
