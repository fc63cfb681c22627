// The peers are installed by the bench on demand into a scratch directory (bench/.peers, ignored by
// git), never as dependencies of warden: each at a pinned version, the newest the npm registry here
// had when the bench was written (PEERS_CERBOS, PEERS_CEDAR, PEERS_CASBIN set others).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const PEER_PACKAGES: Record<string, string> = {
  "@cerbos/cerbos-linux-x64": process.env.PEERS_CERBOS ?? "0.55.0",
  "@cedar-policy/cedar-wasm": process.env.PEERS_CEDAR ?? "4.13.0",
  casbin: process.env.PEERS_CASBIN ?? "5.51.1",
};

const installedVersion = (dir: string, name: string): string | undefined => {
  const file = join(dir, "node_modules", name, "package.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version : undefined;
};

/** Installs what is missing or at another version; answers each package's installed version. */
export function installPeers(dir: string): Record<string, string> {
  const missing = Object.entries(PEER_PACKAGES).filter(([name, version]) => installedVersion(dir, name) !== version);
  if (missing.length > 0) {
    mkdirSync(dir, { recursive: true });
    if (!existsSync(join(dir, "package.json"))) writeFileSync(join(dir, "package.json"), '{ "private": true }\n');
    const specs = missing.map(([name, version]) => `${name}@${version}`);
    console.log(`peers: npm install --prefix ${dir} ${specs.join(" ")}`);
    const r = spawnSync("npm", ["install", "--prefix", dir, "--no-audit", "--no-fund", ...specs], { stdio: "inherit" });
    if (r.status !== 0) throw new Error(`peers: npm install of ${specs.join(" ")} failed`);
  }
  return Object.fromEntries(Object.keys(PEER_PACKAGES).map((name) => [name, installedVersion(dir, name)!]));
}

/** The Cerbos PDP binary the package ships. */
export const cerbosBinary = (dir: string) => join(dir, "node_modules/@cerbos/cerbos-linux-x64/cerbos-linux-x64");
