// The most common leaked passwords of 8 or more characters (lower-cased), from the public
// top-password lists. Short by design: length and bcrypt do the rest.
export const COMMON_PASSWORDS: ReadonlySet<string> = new Set([
  "password", "password1", "password12", "password123", "password1234", "passw0rd", "p@ssw0rd", "p@ssword",
  "12345678", "123456789", "1234567890", "12345678910", "87654321", "11111111", "00000000", "88888888",
  "123123123", "1q2w3e4r", "1q2w3e4r5t", "1qaz2wsx", "qwertyui", "qwertyuiop", "qwerty123", "qwerty12",
  "asdfghjk", "asdfghjkl", "zxcvbnm1", "abcd1234", "abc12345", "abcdefgh", "iloveyou", "iloveyou1",
  "sunshine", "princess", "football", "baseball", "superman", "starwars", "trustno1", "whatever",
  "letmein1", "welcome1", "welcome123", "admin123", "administrator", "changeme", "computer", "internet",
  "michelle", "jennifer", "jordan23", "basketball", "charlie1", "master12", "mustang1", "passport",
  "qazwsxedc", "zaq12wsx", "aa123456", "a1234567", "dragon12", "monkey12", "shadow12", "1234qwer",
  "q1w2e3r4", "q1w2e3r4t5", "11223344", "12341234", "147258369", "987654321", "123qweasd", "qweasdzxc",
  "password!", "password1!", "welcome!", "letmein!", "iloveyou!", "warden123", "secret123", "test1234",
]);
