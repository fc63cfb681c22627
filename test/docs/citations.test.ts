// The documents stay true about the repository: every path a comment, a document or the README
// names exists (or is made by a build or a run, which .gitignore then names), every section of
// docs/*.md a comment or a document cites by its title is there, and docs/architecture.md and the
// README's "Where things are" name every folder of src/.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const TOP = ["src", "test", "scripts", "sql", "bench", "examples"];

/** Every file under `dir` (relative to the root) whose name ends in one of `exts`. */
function filesUnder(dir: string, exts: string[]): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (name === "node_modules" || name.startsWith(".")) return [];
    if (statSync(join(ROOT, path)).isDirectory()) return filesUnder(path, exts);
    return exts.some((ext) => name.endsWith(ext)) ? [path] : [];
  });
}

/** The comments of a source file, one string per line (its code left out). */
export function commentsOf(path: string, text: string): string {
  const marker = path.endsWith(".sql") ? /--(.*)$/ : /(?:^\s*\*|\/\/|\/\*)(.*)$/;
  return text
    .split("\n")
    .map((line) => line.match(marker)?.[1] ?? "")
    .join("\n");
}

/** A markdown document without its fenced code blocks (commands run elsewhere, outputs). */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "");
}

/** What each checked text says, by file: documents and the README whole, source files their comments. */
function texts(): [string, string][] {
  const docs = ["README.md", ...filesUnder("docs", [".md"])].map((path): [string, string] => [path, prose(readFileSync(join(ROOT, path), "utf8"))]);
  const sources = TOP.flatMap((dir) => filesUnder(dir, [".ts", ".tsx", ".sql"])).filter((path) => !path.startsWith("src/sdk/gen/"));
  return [...docs, ...sources.map((path): [string, string] => [path, commentsOf(path, readFileSync(join(ROOT, path), "utf8"))])];
}

/** The repository paths a text names: `src/...`, `docs/...`, ... (patterns like `sql/schema/NN_*.sql` left out). */
export function pathsIn(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?<![\w./@-])((?:src|test|scripts|sql|docs|bench|examples)\/[\w./*<>{}$-]*[\w/*>}])/g)) {
    const path = match[1]!;
    if (/[*<>{}$]|NN/.test(path)) continue;
    found.push(path.replace(/\.$/, ""));
  }
  return found;
}

/** The sections a text cites by title: `docs/api.md, "Approvals"`. */
export function citedSections(text: string): { doc: string; title: string }[] {
  const flat = text.replace(/\n\s*(?:\/\/|\*|--)?\s*/g, " ");
  return [...flat.matchAll(/\b(docs\/[\w-]+\.md)[,:]?\s+(?:sections?\s+)?"([^"\n]+)"/g)].map((m) => ({ doc: m[1]!, title: m[2]! }));
}

/** The titles of a document: its headings, and the bold lead of a paragraph (`**Keys for agents.**`). */
function titlesOf(doc: string): string[] {
  const text = readFileSync(join(ROOT, doc), "utf8");
  const headings = [...text.matchAll(/^#{1,6} +(.+)$/gm)].map((m) => m[1]!.replaceAll("`", "").trim());
  const leads = [...text.matchAll(/^\*\*([^*]+?)\.?\*\*/gm)].map((m) => m[1]!.trim());
  return [...headings, ...leads];
}

function ignoredByGit(paths: string[]): Set<string> {
  if (paths.length === 0) return new Set();
  // A folder not made yet matches its pattern (`bench/.peers/`) only with its slash.
  const asked = paths.flatMap((path) => (path.endsWith("/") ? [path] : [path, `${path}/`]));
  const run = Bun.spawnSync(["git", "check-ignore", "--no-index", "--stdin"], { cwd: ROOT, stdin: new TextEncoder().encode(asked.join("\n") + "\n") });
  return new Set(run.stdout.toString().split("\n").filter(Boolean).flatMap((path) => [path, path.replace(/\/$/, "")]));
}

describe("citations", () => {
  const all = texts();

  test("the scans see what they should", () => {
    expect(pathsIn("see src/app/deps.ts, `sql/schema/NN_x.sql`, sql/queries/<cap>/x.sql and test/a/ (docs/api.md).")).toEqual(["src/app/deps.ts", "test/a/", "docs/api.md"]);
    expect(pathsIn("https://example.com/src/x.ts and @scope/docs/y.md")).toEqual([]);
    const slashes = "/".repeat(2);
    expect(commentsOf("a.ts", `const a = "docs/a"; ${slashes} src/b.ts\n * docs/c.md`)).toBe(" src/b.ts\n docs/c.md");
    expect(citedSections(`// the roles (docs/api.md,\n// "Teams: members") and docs/mcp.md "Results"`)).toEqual([
      { doc: "docs/api.md", title: "Teams: members" },
      { doc: "docs/mcp.md", title: "Results" },
    ]);
  });

  test("every repository path a comment, a document or the README names exists", () => {
    const missing = new Map<string, Set<string>>();
    for (const [file, text] of all) {
      for (const path of pathsIn(text)) {
        if (existsSync(join(ROOT, path))) continue;
        if (!missing.has(path)) missing.set(path, new Set());
        missing.get(path)!.add(file);
      }
    }
    // Made by a build or a run (bench/results/scratch/, src/sdk/gen/, ...): .gitignore names them.
    const made = ignoredByGit([...missing.keys()]);
    const stale = [...missing].filter(([path]) => !made.has(path)).map(([path, files]) => `${path} (named in ${[...files].join(", ")})`);
    expect(stale).toEqual([]);
  });

  test("every section of docs/*.md cited by its title is there", () => {
    const wrong: string[] = [];
    for (const [file, text] of all) {
      for (const { doc, title } of citedSections(text)) {
        if (!existsSync(join(ROOT, doc))) wrong.push(`${file}: ${doc} does not exist`);
        else if (!titlesOf(doc).some((t) => t === title || t.startsWith(`${title}:`) || t.startsWith(`${title} (`))) wrong.push(`${file}: ${doc}, "${title}"`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test("docs/architecture.md and the README name every folder of src/", () => {
    const folders = readdirSync(join(ROOT, "src")).filter((name) => statSync(join(ROOT, "src", name)).isDirectory());
    expect(folders.length).toBeGreaterThan(10);
    const architecture = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const whereThingsAre = readme.slice(readme.indexOf("## Where things are"), readme.indexOf("\n## ", readme.indexOf("## Where things are") + 1));
    expect(folders.filter((folder) => !architecture.includes(`\`src/${folder}/\``))).toEqual([]);
    expect(folders.filter((folder) => !whereThingsAre.includes(`\`src/${folder}/\``) && !whereThingsAre.includes(`\`${folder}/\``))).toEqual([]);
  });
});
