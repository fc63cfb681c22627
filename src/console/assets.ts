// Where the console's built files come from: the one seam between the web console and how warden
// is shipped. Today the source is the folder `npm run build:console` writes (dist/console/); a
// single binary can embed the same files and pass them to useConsoleSource() before it starts.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

/** File name relative to the build folder ("index.html", "index-3f2a9c1b.js") -> its bytes. */
export type ConsoleSource = () => Promise<Map<string, Uint8Array>>;

export interface ConsoleFile {
  body: Uint8Array;
  /** Present when compressing saves something; served to clients that accept gzip. */
  gzip?: Uint8Array;
  type: string;
}

export interface ConsoleAssets {
  index: ConsoleFile;
  /** Content-hashed files, by name: served under /console/assets/ with a year-long cache. */
  files: Map<string, ConsoleFile>;
}

export const CONSOLE_DIST = fileURLToPath(new URL("../../dist/console", import.meta.url));

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  ico: "image/x-icon",
  woff2: "font/woff2",
  txt: "text/plain; charset=utf-8",
};

/** The build folder on disk (default: dist/console next to the sources). */
export function directorySource(dir = CONSOLE_DIST): ConsoleSource {
  return async () => {
    const files = new Map<string, Uint8Array>();
    for (const name of await readdir(dir)) {
      // Only plain built files; a build in progress writes dot-files and renames them.
      if (name.startsWith(".") || !(name.split(".").pop()! in TYPES)) continue;
      files.set(name, new Uint8Array(await readFile(join(dir, name))));
    }
    return files;
  };
}

let current: ConsoleSource = directorySource();

/** Serves the console from elsewhere, for example files embedded in the single binary; call before the app is built. */
export function useConsoleSource(source: ConsoleSource): void {
  current = source;
}

/** The source the console routes read: the build folder unless useConsoleSource said otherwise. */
export function consoleSource(): ConsoleSource {
  return current;
}

/** Reads every file once; undefined when there is no build (no index.html). */
export async function loadConsoleAssets(source: ConsoleSource): Promise<ConsoleAssets | undefined> {
  let raw: Map<string, Uint8Array>;
  try {
    raw = await source();
  } catch {
    return undefined;
  }
  const html = raw.get("index.html");
  if (!html) return undefined;
  const file = (name: string, body: Uint8Array): ConsoleFile => {
    const type = TYPES[name.split(".").pop()!] ?? "application/octet-stream";
    const packed = type.startsWith("text/") || type === "image/svg+xml" ? gzipSync(body, { level: 9 }) : undefined;
    return { body, type, gzip: packed && packed.length < body.length ? new Uint8Array(packed) : undefined };
  };
  const files = new Map<string, ConsoleFile>();
  for (const [name, body] of raw) if (name !== "index.html") files.set(name, file(name, body));
  return { index: file("index.html", html), files };
}
