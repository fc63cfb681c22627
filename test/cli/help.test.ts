// `warden help` and `warden help COMMAND` for every command the full help lists: each begins with
// what to type, its summaries start in one column, and no line is wider than 100 characters.
import { describe, expect, test } from "bun:test";
import { runCli } from "../helpers/cli.ts";
import { usageTable, wrap } from "../../src/cli/usage.ts";

const SLOW = 30_000;
const COLUMN = 42; // two spaces of indent, then the 40 characters of the synopsis column

/** The table lines of a help text that break its layout, with why. */
function layoutProblems(text: string): string[] {
  const lines = text.trimEnd().split("\n");
  const problems: string[] = [];
  lines.forEach((line, i) => {
    if (line.length > 100) problems.push(`wider than 100: ${line}`);
    if (i === 0) return;
    // A summary's continuation (or the summary under a synopsis too wide for its column) starts in the column.
    if (line.slice(0, COLUMN).trim() === "") {
      if (line[COLUMN] === " " || line.length === COLUMN) problems.push(`continuation out of its column: ${line}`);
      return;
    }
    // A synopsis and its summary on one line: the gap between them ends at the column.
    const gap = /^  \S.*?\S( {2,})\S/.exec(line);
    if (gap && gap.index + gap[0].length - 1 !== COLUMN) problems.push(`summary out of its column: ${line}`);
    // Anything else is a synopsis alone on its line, or a paragraph in single spaces.
  });
  return problems;
}

describe("help", () => {
  test("the layout rules catch a summary one column off", () => {
    const good = usageTable([{ synopsis: "policy test POLICY.json CASES.json", summary: "run test cases" }]);
    expect(layoutProblems(`usage: warden x\n${good}`)).toEqual([]);
    expect(layoutProblems(`usage: warden x\n${good.replace("CASES.json ", "CASES.json")}`)).toHaveLength(1);
    expect(wrap("a bb ccc dddd", 6)).toEqual(["a bb", "ccc", "dddd"]);
  });

  test("warden help, and help COMMAND and COMMAND --help for every command it lists", async () => {
    const all = await runCli(["help"]);
    expect({ code: all.code, stderr: all.stderr }).toEqual({ code: 0, stderr: "" });
    expect(all.stdout).toStartWith("usage: warden <command>");
    expect(layoutProblems(all.stdout)).toEqual([]);
    const commands = [...new Set([...all.stdout.matchAll(/^  ([a-z][a-z-]*)/gm)].map((m) => m[1]))].filter((c) => c !== "help");
    expect(commands).toEqual(expect.arrayContaining(["serve", "simulate", "verify", "policy", "ops", "restore", "migrate"]));
    for (const command of commands) {
      const [viaHelp, viaFlag] = await Promise.all([runCli(["help", command]), runCli([command, "--help"])]);
      expect({ command, code: viaHelp.code, stderr: viaHelp.stderr }).toEqual({ command, code: 0, stderr: "" });
      expect(viaFlag.stdout).toBe(viaHelp.stdout);
      const [first] = viaHelp.stdout.split("\n");
      // Never a bare "usage: warden": the first line says what to type.
      expect(first).toStartWith(`usage: warden ${command}`);
      expect({ command, problems: layoutProblems(viaHelp.stdout) }).toEqual({ command, problems: [] });
    }
  }, SLOW);

  test("help of one ops command", async () => {
    const run = await runCli(["help", "ops", "signing-key", "revoke"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toStartWith("usage: warden ops signing-key revoke KID --compromised-since TIME\n");
    expect(layoutProblems(run.stdout)).toEqual([]);
  }, SLOW);
});
