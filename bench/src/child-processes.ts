import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync } from "node:fs";

/** A process the harness started; `stop()` ends it (SIGTERM, then SIGKILL after a grace period). */
export interface ChildHandle {
  name: string;
  pid: number;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
  hasExited(): boolean;
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
let exitHooksInstalled = false;

/**
 * Kills every child still running, synchronously, so that a harness that throws or is interrupted
 * leaves no API, worker, stub or redis-server behind. Installed once, on the first spawn.
 */
function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on("exit", () => {
    for (const child of running) child.kill("SIGKILL");
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      for (const child of running) child.kill("SIGKILL");
      process.exit(130);
    });
  }
}

export interface SpawnChildOptions {
  name: string;
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  /** stdout and stderr go to this file, so a busy child never blocks on a pipe the harness must drain. */
  logPath: string;
  cwd?: string;
}

/** Starts one child process with its output appended to a log file, and tracks it for cleanup. */
export function spawnChild(options: SpawnChildOptions): ChildHandle {
  installExitHooks();
  const logFd = openSync(options.logPath, "a");
  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", logFd, logFd],
  });
  closeSync(logFd);
  if (child.pid === undefined) throw new Error(`could not start ${options.name} (${options.command})`);
  running.add(child);
  let exitedFlag = false;
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => {
      exitedFlag = true;
      running.delete(child);
      resolve(code ?? signal ?? "unknown");
    });
    child.once("error", () => {
      exitedFlag = true;
      running.delete(child);
      resolve("spawn error");
    });
  });
  return {
    name: options.name,
    pid: child.pid,
    exited,
    hasExited: () => exitedFlag,
    async stop(graceMs = 10_000) {
      if (exitedFlag) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Stops children in reverse start order, so consumers go before the Redis they use. */
export async function stopAll(children: readonly ChildHandle[]): Promise<void> {
  for (const child of [...children].reverse()) {
    await child.stop().catch(() => undefined);
  }
}
