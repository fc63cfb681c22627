// Progress of a long command on stderr, only when a person watches it (stderr is a terminal):
// piped or redirected output stays exactly the command's result.

export interface Progress {
  update(text: string): void;
  /** Clears the line. */
  done(): void;
}

interface Terminal {
  isTTY?: boolean;
  write(text: string): unknown;
}

/** At most ten updates a second, each overwriting the last. */
export function progress(stream: Terminal = process.stderr): Progress {
  if (!stream.isTTY) return { update() {}, done() {} };
  let last = 0;
  let shown = false;
  return {
    update(text) {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      shown = true;
      stream.write(`\r\x1b[K${text}`);
    },
    done() {
      if (shown) stream.write("\r\x1b[K");
    },
  };
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1_048_576).toFixed(1)} MB`;
}
