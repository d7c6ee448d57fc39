import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/** A service process started as an operator would: `node apps/<name>/dist/main.js` with env. */
export interface ServiceProcess {
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the first output line matching, or rejects when the process exits first. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM (or the given signal) and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `root`: the repository to start it from (another copy of it, e.g. a production install); this one by default. */
export function startService(app: "api" | "worker", env: Record<string, string>, root = repoRoot): ServiceProcess {
  const child = spawn(process.execPath, [join(root, `apps/${app}/dist/main.js`)], {
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  const exited = once(child, "exit").then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));

  return {
    child,
    output: () => output,
    waitForLine(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const line = output.split("\n").find((candidate) => pattern.test(candidate));
          if (line === undefined) return;
          finish();
          resolve(line);
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`${app} printed no line matching ${pattern} within ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        void exited.then(({ code, signal }) => {
          finish();
          reject(new Error(`${app} exited (${signal ?? code}) before printing ${pattern}:\n${output}`));
        });
        listeners.add(check);
        check();
      });
    },
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Polls `url` until it answers 200 (bounded), for process start-up. */
export function waitForOk(url: string, timeoutMs = 30_000): Promise<void> {
  return waitForStatus(url, 200, timeoutMs);
}

/** Polls `url` until it answers `status` (bounded): for a change of state the test caused, e.g. an outage. */
export async function waitForStatus(url: string, status: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answered = await fetch(url).then(
      (response) => response.status,
      () => undefined,
    );
    if (answered === status) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms (last: ${answered ?? "no answer"})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
