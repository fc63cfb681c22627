// What a log line shows of an e-mail address (docs/security.md): shared by the security events of
// src/accounts/ and the development mail transport of src/mail/, which sits below accounts.

/** `j***@example.com`: the first character of the local part and the domain. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  if (at < 1) return "***";
  return `${email[0]}***${email.slice(at)}`;
}
