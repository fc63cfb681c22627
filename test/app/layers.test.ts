// The layers of docs/architecture.md, checked on the import lines. Every folder of src/ has its
// place in LAYERS (scripts/layers.ts, top first), and a file imports only its own folder and the
// folders below it: no import runs up, so no two folders import each other and no files form a
// cycle. src/decide/ is the decision core every capability uses: it imports nothing but itself,
// the crypto leaf (src/crypto/) and the schema library, or the cycles it was moved out of come
// back. Logic and routes take the pieces they need (a route module declares its slice as its
// parameter type), so only the composition root names Deps, the whole of what it built.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileCycles, fileEdges, LAYERS, sourceFiles as filesUnder, specifiers, twoWay, unitOf, upward, type Edge } from "../../scripts/layers.ts";

const SRC = resolve(import.meta.dir, "../../src");
const PACKAGES = new Set(["@sinclair/typebox", "@sinclair/typebox/value"]);

/** Every .ts or .tsx file under src/, relative to it. */
const sourceFiles = () => filesUnder(SRC);

/** What a file of `dir` may not import: anything outside the allowed folders of src/ and the allowed packages. */
function outsiders(dir: string, allowed: string[], packages: Set<string>): string[] {
  const bad: string[] = [];
  for (const name of readdirSync(join(SRC, dir))) {
    const file = join(SRC, dir, name);
    for (const spec of specifiers(readFileSync(file, "utf8"))) {
      if (!spec.startsWith(".")) {
        if (!packages.has(spec)) bad.push(`${dir}/${name}: ${spec}`);
        continue;
      }
      const target = relative(SRC, resolve(dirname(file), spec));
      if (!allowed.some((folder) => target.startsWith(`${folder}/`))) bad.push(`${dir}/${name}: ${spec}`);
    }
  }
  return bad;
}

describe("src/decide is a leaf", () => {
  test("the scan sees every form of import", () => {
    const code = [
      `import { a } from "../app/deps.ts";`,
      `// import { example } from "../commented/out.ts";`,
      `import type {\n  B,\n} from "../db/index.ts";`,
      `export { c } from "../http/errors.ts";`,
      `import "../mail/templates.ts";`,
      `const d = await import("../keys/model.ts");`,
    ].join("\n");
    expect(specifiers(code)).toEqual(["../app/deps.ts", "../db/index.ts", "../http/errors.ts", "../mail/templates.ts", "../keys/model.ts"]);
  });

  test("its files import only src/decide, src/crypto and the schema library", () => {
    expect(readdirSync(join(SRC, "decide")).length).toBeGreaterThan(0);
    expect(outsiders("decide", ["decide", "crypto"], PACKAGES)).toEqual([]);
  });

  test("src/crypto, the one leaf it uses, imports no capability", () => {
    expect(outsiders("crypto", ["crypto"], new Set(["jose", "json-canonicalize", "node:crypto", "node:os"]))).toEqual([]);
  });
});

describe("Deps", () => {
  test("is named only by the composition root", () => {
    const naming = sourceFiles().filter((path) => {
      const file = join(SRC, path);
      return specifiers(readFileSync(file, "utf8")).some((spec) => spec.startsWith(".") && relative(SRC, resolve(dirname(file), spec)) === "app/deps.ts");
    });
    expect(naming.length).toBeGreaterThan(0);
    expect(naming.filter((path) => !path.startsWith("app/"))).toEqual([]);
  });
});

describe("the guards", () => {
  // A route turns on the session, API-key or either-credential guard with a flag
  // (src/http/guards.ts, docs/architecture.md, "How a route guards itself"); none pastes its own check.
  test("no file but the guards' own reads a caller in a .derive", () => {
    const pasted = sourceFiles().filter((path) => {
      const code = readFileSync(join(SRC, path), "utf8").replace(/^\s*(?:\/\/|\/\*|\*).*$/gm, "");
      // Elysia's derive takes a function (or its options first); SecretBox.derive takes a secret.
      return path !== "http/guards.ts" && /\.derive\(\s*(async\b|function\b|\(|\{)/.test(code);
    });
    expect(pasted).toEqual([]);
  });

  test("every route file that takes a caller uses the guards' macros", () => {
    const users = sourceFiles().filter((path) => /(^|\/|-)routes\.ts$/.test(path) && /\.guard\(\{ (session: true|apiKey: (true|"bearer")|keyOrSession: true) \}\)/.test(readFileSync(join(SRC, path), "utf8")));
    expect(users.length).toBeGreaterThanOrEqual(17);
  });
});

describe("the layers", () => {
  const edges = fileEdges(SRC);

  test("name every folder of src/, and only those", () => {
    const units = new Set(sourceFiles().map(unitOf));
    expect([...units].filter((unit) => !(LAYERS as readonly string[]).includes(unit)).sort()).toEqual([]);
    expect(LAYERS.filter((unit) => !units.has(unit))).toEqual([]);
  });

  test("no import runs up a layer", () => {
    expect(upward(edges).map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  test("no two folders import each other, and no files form a cycle", () => {
    expect(twoWay(edges.filter((e) => !e.depsType))).toEqual([]);
    expect(fileCycles(edges)).toEqual([]);
  });

  test("a new break is seen", () => {
    const up: Edge = { from: "receipts/store.ts", to: "approvals/approvals.ts", depsType: false };
    const down: Edge = { from: "approvals/approvals.ts", to: "receipts/store.ts", depsType: false };
    expect(upward([up, down])).toEqual([up]);
    expect(twoWay([up, down])).toEqual(["approvals <-> receipts"]);
    expect(fileCycles([up, { from: "approvals/approvals.ts", to: "receipts/store.ts", depsType: false }])).toEqual([["approvals/approvals.ts", "receipts/store.ts"]]);
    expect(upward([{ from: "mail/routes.ts", to: "accounts/lifecycle.ts", depsType: false }])).toHaveLength(1);
    expect(unitOf("log.ts")).toBe("base");
    expect(unitOf("binary.ts")).toBe("binary");
  });
});
