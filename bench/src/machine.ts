import { execFileSync } from "node:child_process";
import { cpus, loadavg, totalmem } from "node:os";

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  totalMemoryGiB: number;
  node: string;
  platform: string;
  redis: string;
  loadAverageAtStart: number[];
}

/** What the figures were measured on; they only compare within one run on one machine. */
export function describeMachine(): MachineInfo {
  let redis = "unknown";
  try {
    redis = /v=(\S+)/.exec(execFileSync("redis-server", ["--version"], { encoding: "utf8" }))?.[1] ?? "unknown";
  } catch {
    redis = "not installed";
  }
  return {
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    cores: cpus().length,
    totalMemoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    redis,
    loadAverageAtStart: loadavg().map((value) => Math.round(value * 100) / 100),
  };
}

/** The commit the service was built from, when the repository is a git checkout. */
export function currentCommit(repoRoot: string): string {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: repoRoot, encoding: "utf8" }).trim();
    return dirty === "" ? commit : `${commit} (+ uncommitted changes)`;
  } catch {
    return "unknown";
  }
}
