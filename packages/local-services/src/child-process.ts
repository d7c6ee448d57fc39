import { spawn, type ChildProcess } from "node:child_process";
import { access, constants, rm } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { freePort } from "./free-port.js";

/**
 * A binary's path: /usr/bin first (where Debian's packages put them), then the PATH.
 * @throws Error naming the Debian package that provides it.
 */
export async function findBinary(name: string, debianPackage: string): Promise<string> {
  const candidates = [
    join("/usr/bin", name),
    ...(process.env.PATH ?? "")
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, name)),
  ];
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // try the next place
    }
  }
  throw new Error(`${name} not found: install Debian's ${debianPackage} package (apt-get install ${debianPackage})`);
}

/** Runs a command to its end; rejects with the tail of its stderr when it fails. */
export function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
    const stderr = collectTail(child);
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.slice(0, 3).join(" ")} failed (${signal ?? `exit ${code}`}): ${stderr()}`));
    });
  });
}

/** Keeps the last few KiB of a child's stderr for error messages. */
export function collectTail(child: ChildProcess): () => string {
  let tail = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    tail = (tail + chunk).slice(-4096);
  });
  return () => tail.trim();
}

/**
 * Waits until `<url>/-/ready` answers 200 (Prometheus and Alertmanager both have it).
 * @throws Error with the child's stderr when it exits first or is not ready in time.
 */
export async function waitUntilReady(name: string, url: string, child: ChildProcess, timeoutMs: number, stderr: () => string): Promise<void> {
  let exited = false;
  const onExit = () => {
    exited = true;
  };
  child.once("exit", onExit);
  child.once("error", onExit);
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      if (exited) throw new Error(`${name} exited before it was ready: ${stderr()}`);
      try {
        const response = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1_000) });
        await response.body?.cancel();
        if (response.status === 200) return;
      } catch {
        // not listening yet
      }
      await delay(50);
    }
    throw new Error(`${name} was not ready within ${timeoutMs} ms: ${stderr()}`);
  } finally {
    child.off("exit", onExit);
    child.off("error", onExit);
  }
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the child has exited. */
export async function terminate(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const killTimer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  try {
    await exited;
  } finally {
    clearTimeout(killTimer);
  }
}

/** A server process of ours on a loopback port, and how to stop it (its directory goes with it). */
export interface ServedProcess {
  url: string;
  stop(): Promise<void>;
}

const PORT_ATTEMPTS = 3;

/**
 * Starts `binary` with the arguments `argsFor(port)` gives for a free loopback port, and waits until its
 * `/-/ready` answers. freePort can lose a race with another process, and a bind failure ends the child
 * early, so a failed start is retried on another port. `stop()` terminates it and removes `dir`; when it
 * never starts, `dir` is left to the caller.
 * @throws the last start's error when no attempt became ready.
 */
export async function serveOnFreePort(
  name: string,
  binary: string,
  argsFor: (port: number) => string[],
  dir: string,
  readyTimeoutMs: number,
): Promise<ServedProcess> {
  let lastError: unknown;
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt += 1) {
    const port = await freePort();
    const child = spawn(binary, argsFor(port), { stdio: ["ignore", "ignore", "pipe"] });
    const stderr = collectTail(child);
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitUntilReady(name, url, child, readyTimeoutMs, stderr);
      let stopped: Promise<void> | undefined;
      const stop = () => {
        stopped ??= (async () => {
          await terminate(child);
          await rm(dir, { recursive: true, force: true });
        })();
        return stopped;
      };
      return { url, stop };
    } catch (error) {
      lastError = error;
      await terminate(child);
    }
  }
  throw lastError instanceof Error ? lastError : new Error(`${name} did not start`);
}
