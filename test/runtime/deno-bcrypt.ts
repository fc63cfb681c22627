// Run by test/runtime.test.ts under Deno: checks a hash Bun made and makes one for Bun to check,
// both through src/runtime.ts as the service calls it there. Prints one JSON line.
import { bcryptHash, bcryptVerify, RUNTIME } from "../../src/runtime.ts";

const [password, bunHash] = process.argv.slice(2);
console.log(JSON.stringify({
  runtime: RUNTIME,
  verifiesBunHash: await bcryptVerify(password, bunHash),
  rejectsOtherPassword: !(await bcryptVerify(password + "!", bunHash)),
  hash: await bcryptHash(password, 4),
}));
