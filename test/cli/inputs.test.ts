// Where the CLI looks for the files it is given: `npm run cli` runs in the package's folder, so a
// relative path is the caller's, from INIT_CWD, while npm runs the cli script itself.
import { afterEach, describe, expect, test } from "bun:test";
import { callerPath } from "../../src/cli/inputs.ts";

const saved = { INIT_CWD: process.env.INIT_CWD, npm_lifecycle_event: process.env.npm_lifecycle_event };
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe("callerPath", () => {
  test("under npm run cli: a relative path is the caller's folder's", () => {
    Object.assign(process.env, { INIT_CWD: "/home/me/project/sub", npm_lifecycle_event: "cli" });
    expect(callerPath("result.json")).toBe("/home/me/project/sub/result.json");
    expect(callerPath("../bundle.json")).toBe("/home/me/project/bundle.json");
    expect(callerPath("/tmp/abs.json")).toBe("/tmp/abs.json");
    expect(callerPath("-")).toBe("-");
  });

  test("anywhere else (the binary, a script run by npm test): the path as given", () => {
    Object.assign(process.env, { INIT_CWD: "/home/me/project/sub", npm_lifecycle_event: "test" });
    expect(callerPath("result.json")).toBe("result.json");
    delete process.env.npm_lifecycle_event;
    expect(callerPath("result.json")).toBe("result.json");
  });
});
