// The help text of every command, laid out in one place: a synopsis column and a summary column
// that starts at the same place on every line, nothing wider than a terminal of 100 columns.

/** One form of a command: what to type (after `warden `) and what it does. */
export interface UsageLine {
  synopsis: string;
  summary: string;
}

const INDENT = "  ";
/** The synopsis column; a synopsis that leaves less than two spaces of it gets a line of its own. */
const SYNOPSIS_WIDTH = 40;
const WIDTH = 100;

/** Words of text in lines of at most `width` characters (a longer word stays whole). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** The two-column table: synopsis, summary. */
export function usageTable(lines: UsageLine[]): string {
  const column = INDENT + " ".repeat(SYNOPSIS_WIDTH);
  const width = WIDTH - column.length;
  const out: string[] = [];
  for (const { synopsis, summary } of lines) {
    const [first = "", ...rest] = wrap(summary, width);
    if (synopsis.length <= SYNOPSIS_WIDTH - 2) {
      out.push(INDENT + synopsis.padEnd(SYNOPSIS_WIDTH) + first);
    } else {
      out.push(INDENT + synopsis, column + first);
    }
    for (const more of rest) out.push(column + more);
  }
  return out.join("\n");
}

/**
 * `warden help COMMAND`: a command of one form is its synopsis with the summary below; a command
 * of several forms is a header, then the table of its forms.
 */
export function commandHelp(header: string, lines: UsageLine[]): string {
  if (lines.length === 1) return [`usage: warden ${lines[0].synopsis}`, ...wrap(lines[0].summary, WIDTH - INDENT.length).map((line) => INDENT + line)].join("\n");
  return `usage: warden ${header}\n${usageTable(lines)}`;
}
