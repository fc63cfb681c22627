// The import graph of src/ folder by folder (docs/architecture.md, "Layers"): which folder imports
// which, how many imports run up the layer order of test/app/layers.test.ts, which folder pairs
// import each other and which files form an import cycle.
//   bun scripts/layers.ts [SRC_DIR]         counts, the upward imports and the cycles
//   bun scripts/layers.ts [SRC_DIR] --dot   the folder graph in Graphviz's language
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * The layers, top first: a file may import only its own unit and the units listed after it.
 * A unit is a folder of src/, or "binary" for the single binary's entry (src/binary.ts and the
 * macro that lists its files), or "base" for the other files directly in src/ (process-wide
 * helpers: configuration, ids, the log, small pure functions).
 */
export const LAYERS = [
  "binary",
  "cli",
  "app",
  "console",
  "sdk",
  "gateways",
  "oauth",
  "authzen",
  "decisions",
  "usage",
  "simulation",
  "approvals",
  "webhooks",
  "plans",
  "policies",
  "entities",
  "members",
  "accounts",
  "mail",
  "outbox",
  "keys",
  "audit",
  "receipts",
  "features",
  "ops",
  "observability",
  "mcp",
  "http",
  "db",
  "decide",
  "crypto",
  "base",
] as const;

/** Files outside src/ that a module may name (the package's version). */
const OUTSIDE_SRC = new Set(["package.json"]);

export interface Edge {
  from: string;
  to: string;
  /** The import names only the type `Deps` of the composition root. */
  depsType: boolean;
}

/**
 * Every module a file names: static imports and re-exports (types too), side-effect and dynamic
 * imports, require(). Lines that are comments are left out: they may show an import as an example.
 */
export function specifiers(code: string): string[] {
  code = code.replace(/^\s*(?:\/\/|\/\*|\*).*$/gm, "");
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\b(?:import|require)\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) for (const match of code.matchAll(pattern)) found.push(match[1]!);
  return found;
}

/** Every .ts or .tsx file under `src`, relative to it. */
export function sourceFiles(src: string, dir = ""): string[] {
  return readdirSync(join(src, dir)).flatMap((name) => {
    const path = dir ? `${dir}/${name}` : name;
    if (statSync(join(src, path)).isDirectory()) return sourceFiles(src, path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** The unit of LAYERS a file of src/ belongs to. */
export function unitOf(path: string): string {
  if (path.includes("/")) return path.slice(0, path.indexOf("/"));
  return path === "binary.ts" || path === "binary-files.ts" ? "binary" : "base";
}

/** Every import of one file of src/ by another (imports of packages and of OUTSIDE_SRC left out). */
export function fileEdges(src: string): Edge[] {
  const edges: Edge[] = [];
  for (const from of sourceFiles(src)) {
    const code = readFileSync(join(src, from), "utf8");
    const typeOnlyDeps = new Set(
      [...code.matchAll(/\bimport\s+type\s*\{\s*Deps\s*\}\s*from\s*["']([^"']+)["']/g)].map((m) => m[1]!),
    );
    for (const spec of specifiers(code)) {
      if (!spec.startsWith(".")) continue;
      const to = relative(src, resolve(dirname(join(src, from)), spec));
      if (to.startsWith("..")) {
        if (!OUTSIDE_SRC.has(relative(resolve(src, ".."), resolve(src, to)))) edges.push({ from, to, depsType: false });
        continue;
      }
      edges.push({ from, to, depsType: to === "app/deps.ts" && typeOnlyDeps.has(spec) });
    }
  }
  return edges;
}

/** The rank of a unit in LAYERS (0 is the top), or -1 for a folder the list does not name. */
export function rank(unit: string): number {
  return (LAYERS as readonly string[]).indexOf(unit);
}

/** The imports that run up the layers (or leave src/), each `from -> to`. */
export function upward(edges: Edge[]): Edge[] {
  return edges.filter((e) => {
    if (e.to.startsWith("..")) return true;
    const a = unitOf(e.from);
    const b = unitOf(e.to);
    return a !== b && rank(b) <= rank(a);
  });
}

/** The unit pairs that import each other, each as "a <-> b" with a before b. */
export function twoWay(edges: Edge[]): string[] {
  const arrows = new Set(edges.map((e) => `${unitOf(e.from)}|${unitOf(e.to)}`));
  const pairs = new Set<string>();
  for (const arrow of arrows) {
    const [a, b] = arrow.split("|") as [string, string];
    if (a !== b && arrows.has(`${b}|${a}`)) pairs.add([a, b].sort().join(" <-> "));
  }
  return [...pairs].sort();
}

/** The file cycles: strongly connected sets of more than one file (Tarjan), each sorted. */
export function fileCycles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) (next.get(e.from) ?? next.set(e.from, []).get(e.from)!).push(e.to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) cycles.push(scc.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const src = resolve(args.find((a) => !a.startsWith("--")) ?? join(import.meta.dir, "../src"));
  const edges = fileEdges(src);
  if (args.includes("--dot")) {
    const counts = new Map<string, number>();
    for (const e of edges) {
      const a = unitOf(e.from);
      const b = e.to.startsWith("..") ? "outside" : unitOf(e.to);
      if (a !== b) counts.set(`"${a}" -> "${b}"`, (counts.get(`"${a}" -> "${b}"`) ?? 0) + 1);
    }
    console.log("digraph src {");
    for (const [arrow, n] of [...counts].sort()) console.log(`  ${arrow} [label=${n}];`);
    console.log("}");
  } else {
    const up = upward(edges);
    const unknown = [...new Set(sourceFiles(src).map(unitOf))].filter((u) => rank(u) === -1);
    const cycles = fileCycles(edges);
    const two = twoWay(edges.filter((e) => !e.depsType));
    console.log(`${up.length} imports run up the layers (${up.filter((e) => e.depsType).length} of them route files taking the type Deps)`);
    for (const e of up) console.log(`  ${e.from} -> ${e.to}${e.depsType ? "  (type Deps)" : ""}`);
    console.log(`${two.length} folder pairs import each other (the type Deps left out): ${two.join(", ")}`);
    console.log(`${cycles.length} file cycles`);
    for (const c of cycles) console.log(`  ${c.join(" ")}`);
    if (unknown.length) console.log(`folders the layers do not name: ${unknown.join(", ")}`);
  }
}
