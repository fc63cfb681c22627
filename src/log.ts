// JSON lines to stdout. Fields that could carry a credential are dropped by name, so a careless
// call site cannot leak a password, token, secret or key into the log.
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type Level = keyof typeof LEVELS;

const SENSITIVE = /pass(word)?|secret|token|api_?key|authorization|cookie|private|jwk|hash/i;

export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: Level, sink: (line: string) => void = (l) => process.stdout.write(l + "\n")): Logger {
  const min = LEVELS[level];
  const emit = (lvl: Exclude<Level, "silent">) => (event: string, fields: Record<string, unknown> = {}) => {
    if (LEVELS[lvl] < min) return;
    const safe: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(fields)) safe[k] = SENSITIVE.test(k) ? "[redacted]" : v;
    sink(JSON.stringify({ time: new Date().toISOString(), level: lvl, event, ...safe }));
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}
