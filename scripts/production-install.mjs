#!/usr/bin/env node
// The image's production install, in one place for the Dockerfile and the test that measures it
// (test/e2e/production-install.test.ts): in a copy of the repository whose apps are built, keep the
// workspaces the API and the worker import, install their run-time dependencies only, and print the size
// of node_modules; exit 1 above the limit (100 MB).
//
// Usage: node scripts/production-install.mjs [dir]   (default: the current directory)
//
// - The other workspaces (tests, benchmark, client, local-services with testcontainers) are removed
//   first: npm links every workspace it finds and installs that workspace's dependencies, whatever
//   --workspace says.
// - TypeScript is removed after the install: Bull Board's valibot names it as an optional peer, and npm
//   keeps an optional peer the lockfile holds (our own development TypeScript, 30 MB with its native
//   compiler) even with --omit=dev and --omit=peer. Nothing imports it at run time. Optional dependencies
//   are installed: resvg's native renderer (the charts' PNGs) is one, per platform.
// - Then what no process reads at run time goes: type declarations, source maps and markdown of the
//   dependencies (a third of their size: OpenTelemetry ships three builds, each declared and mapped).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";

const LIMIT_BYTES = 100_000_000;
const PROCESSES = ["@pes/api", "@pes/worker"];

const root = resolve(process.argv[2] ?? ".");
const readJson = (file) => JSON.parse(readFileSync(file, "utf8"));

/** Workspace folder by package name, from the root package.json's `workspaces` (`dir` or `dir/*`). */
function workspaces() {
  const byName = new Map();
  for (const pattern of readJson(join(root, "package.json")).workspaces) {
    const dirs = pattern.endsWith("/*")
      ? readdirSync(join(root, pattern.slice(0, -2)), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => join(pattern.slice(0, -2), entry.name))
      : [pattern];
    for (const dir of dirs) {
      const manifest = join(root, dir, "package.json");
      if (existsSync(manifest)) byName.set(readJson(manifest).name, dir);
    }
  }
  return byName;
}

const byName = workspaces();
const needed = new Set();
const pending = [...PROCESSES];
while (pending.length > 0) {
  const name = pending.pop();
  if (needed.has(name)) continue;
  const dir = byName.get(name);
  if (dir === undefined) throw new Error(`${name} is not a workspace of ${root}`);
  needed.add(name);
  for (const dependency of Object.keys(readJson(join(root, dir, "package.json")).dependencies ?? {})) {
    if (byName.has(dependency)) pending.push(dependency);
  }
}
const removed = [...byName].filter(([name]) => !needed.has(name)).map(([, dir]) => join(root, dir));
for (const dir of removed) rmSync(dir, { recursive: true, force: true });

const install = spawnSync("npm", ["ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund"], {
  cwd: root,
  stdio: "inherit",
});
if (install.status !== 0) process.exit(install.status ?? 1);
// npm still writes the lockfile's entries nested under a removed workspace (its own copies of a package).
for (const dir of removed) rmSync(dir, { recursive: true, force: true });
for (const peer of ["typescript", "@typescript"]) rmSync(join(root, "node_modules", peer), { recursive: true, force: true });

/** Files of a dependency that nothing reads at run time. */
const NOT_RUN = /(\.d\.[cm]?ts|\.map|\.md|\.markdown)$/i;

/** Deletes what NOT_RUN matches under `dir`, not following links (the workspaces are links). */
function prune(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) prune(path);
    else if (entry.isFile() && NOT_RUN.test(entry.name)) rmSync(path);
  }
}

/** Disk usage in bytes (`du`: what the files take, blocks included), not following the workspace links. */
function diskUsage(path) {
  const du = spawnSync("du", ["-sk", path], { encoding: "utf8" });
  if (du.status !== 0) throw new Error(`du ${path} failed: ${du.stderr}`);
  return Number(du.stdout.split("\t", 1)[0]) * 1024;
}

const modules = join(root, "node_modules");
// The root's, and those npm nests in a workspace (a version that differs from the root's).
const folders = [modules, ...[...needed].map((name) => join(root, byName.get(name), "node_modules")).filter((dir) => existsSync(dir))];
for (const dir of folders) prune(dir);
const total = folders.reduce((sum, dir) => sum + diskUsage(dir), 0);
const largest = readdirSync(modules, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
  .map((entry) => ({ name: entry.name, bytes: diskUsage(join(modules, entry.name)) }))
  .sort((a, b) => b.bytes - a.bytes)
  .slice(0, 8);
const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
process.stdout.write(
  `production node_modules: ${mb(total)} (limit ${mb(LIMIT_BYTES)}) for ${[...needed].sort().join(", ")}\n` +
    `largest: ${largest.map((entry) => `${entry.name} ${mb(entry.bytes)}`).join(", ")}\n`,
);
if (total >= LIMIT_BYTES) {
  process.stderr.write(`production node_modules is ${mb(total)}, over the ${mb(LIMIT_BYTES)} limit\n`);
  process.exit(1);
}
