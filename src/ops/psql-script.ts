// Operator scripts in sql/ops/ are written for psql (`-v name=value`, `:'name'`). To run the very
// same files against the embedded database, the CLI turns each `:'name'` into a bind parameter
// (`$n`, never string-pasted) and drops psql meta-commands such as `\set ON_ERROR_STOP on`.

/** A script run the wrong way: a variable it needs is missing, or it is not an operator script (exit 2). */
export class ScriptUsageError extends Error {}

export interface ScriptStatement {
  text: string;
  /** Variable names in parameter order: `$1` is names[0]. */
  names: string[];
}

export function translatePsqlScript(script: string): ScriptStatement {
  const names: string[] = [];
  const body = script
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("\\") && !line.trimStart().startsWith("--"))
    .join("\n")
    .trim();
  const text = body.replace(/:'([A-Za-z_][A-Za-z0-9_]*)'/g, (_, name: string) => {
    if (!names.includes(name)) names.push(name);
    return `$${names.indexOf(name) + 1}`;
  });
  if (/(^|[^:]):[A-Za-z_]/.test(text.replace(/'[^']*'/g, "''").replace(/::/g, ""))) {
    throw new Error("operator scripts may only use quoted psql variables (:'name')");
  }
  if (text.replace(/;\s*$/, "").includes(";")) throw new Error("an operator script holds exactly one statement");
  return { text: text.replace(/;\s*$/, ""), names };
}

export function bindVariables(statement: ScriptStatement, vars: Record<string, string>): string[] {
  return statement.names.map((name) => {
    const value = vars[name];
    if (value === undefined) throw new ScriptUsageError(`the script needs -v ${name}=...`);
    return value;
  });
}
