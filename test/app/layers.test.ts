// The layers of docs/architecture.md, checked on the import lines. src/decide/ is the decision core
// every capability uses: it imports nothing but itself, the crypto leaf (src/crypto/) and the schema
// library, or the cycles it was moved out of come back. Logic takes the pieces it needs, so only
// routes (and the composition root) name Deps, the whole of what the root built.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../../src");
const PACKAGES = new Set(["@sinclair/typebox"]);

/** Every module a file names: static imports and re-exports (types too), side-effect and dynamic imports, require(). */
function specifiers(code: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\b(?:import|require)\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of code.matchAll(pattern)) found.push(match[1]!);
  return found;
}

/** Every .ts or .tsx file under src/, relative to it. */
function sourceFiles(dir = ""): string[] {
  return readdirSync(join(SRC, dir)).flatMap((name) => {
    const path = dir ? `${dir}/${name}` : name;
    if (statSync(join(SRC, path)).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

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
  test("is named only by routes and the composition root", () => {
    const naming = sourceFiles().filter((path) => {
      const file = join(SRC, path);
      return specifiers(readFileSync(file, "utf8")).some((spec) => spec.startsWith(".") && relative(SRC, resolve(dirname(file), spec)) === "app/deps.ts");
    });
    expect(naming.length).toBeGreaterThan(0);
    expect(naming.filter((path) => !path.startsWith("app/") && !/(^|\/|-)routes\.ts$/.test(path))).toEqual([]);
  });
});
