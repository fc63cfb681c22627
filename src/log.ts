// JSON lines to stdout (or, with LOG_FORMAT=pretty, text lines for a person). Fields that could carry a credential are dropped by name, so a careless
// call site cannot leak a password, token, secret or key into the log.
import { writeSync } from "node:fs";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type Level = keyof typeof LEVELS;

const SENSITIVE = /pass(word)?|secret|token|api_?key|authorization|cookie|private|jwk|hash/i;

export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

/**
 * Standard output, one write per turn of the event loop: a write per line would cost more than
 * the rest of a simulate call's logging. Lines are flushed on the next turn (setImmediate)
 * and, synchronously, at exit, so none is held back longer than the work in progress.
 */
let pending: string[] = [];
let exitHook = false;
function flushStdout(sync: boolean): void {
  if (pending.length === 0) return;
  const text = pending.join("\n") + "\n";
  pending = [];
  if (sync) writeSync(1, text);
  else process.stdout.write(text);
}
export function stdoutSink(line: string): void {
  if (!exitHook) {
    exitHook = true;
    process.on("exit", () => flushStdout(true));
  }
  if (pending.push(line) === 1) setImmediate(() => flushStdout(false));
}

export type LogFormat = "json" | "pretty";

/** `TIME LEVEL event key=value ...`: a value is bare when it has no space, quote or `=`, else JSON. */
function prettyLine(time: string, level: string, event: string, fields: Record<string, unknown>): string {
  let line = `${time} ${level.toUpperCase().padEnd(5)} ${event}`;
  for (const [k, v] of Object.entries(fields)) {
    if (v !== undefined) line += ` ${k}=${typeof v === "string" && /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v)}`;
  }
  return line;
}

export function createLogger(level: Level, sink: (line: string) => void = stdoutSink, format: LogFormat = "json"): Logger {
  const min = LEVELS[level];
  const emit = (lvl: Exclude<Level, "silent">) => (event: string, fields: Record<string, unknown> = {}) => {
    if (LEVELS[lvl] < min) return;
    const safe: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(fields)) safe[k] = SENSITIVE.test(k) ? "[redacted]" : v;
    const time = new Date().toISOString();
    sink(format === "pretty" ? prettyLine(time, lvl, event, safe) : JSON.stringify({ time, level: lvl, event, ...safe }));
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}
