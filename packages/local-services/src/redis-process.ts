import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { freePort } from "./free-port.js";

/** What redis-server logs once it accepts connections. */
export const READY_LINE = "Ready to accept connections";
const READY_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

/** The first `command` on PATH, if any. */
export function findOnPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, command);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Spawns redis-server and resolves once it logs that it accepts connections (bounded). */
export function spawnUntilReady(binary: string, args: string[]): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`${message}; redis-server said:\n${output.slice(-2000)}`));
    };
    const timer = setTimeout(() => fail(`redis-server was not ready within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (!settled && output.includes(READY_LINE)) {
        settled = true;
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        child.stderr?.off("data", onData);
        // Keep draining the pipes so that a chatty server never blocks on a full buffer.
        child.stdout?.resume();
        child.stderr?.resume();
        child.off("exit", onExit);
        resolve(child);
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => fail(`redis-server exited before it was ready (code ${code}, signal ${signal})`);
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
    child.once("error", (error) => fail(`could not start redis-server: ${error.message}`));
  });
}

/** Tries on fresh ports when the ones picked were taken meanwhile. */
const PORT_ATTEMPTS = 5;

/**
 * spawnUntilReady on `count` ports that were free a moment ago (freePort): another process may take one
 * between the pick and redis-server's bind (on a busy host, an outgoing connection's ephemeral port), so
 * a start refused with "Address already in use" is tried again on fresh ports, up to PORT_ATTEMPTS times.
 */
export async function spawnOnFreePorts(
  binary: string,
  count: number,
  argsFor: (ports: number[]) => string[],
): Promise<{ child: ChildProcess; ports: number[] }> {
  for (let attempt = 1; ; attempt += 1) {
    const ports: number[] = [];
    while (ports.length < count) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    try {
      return { child: await spawnUntilReady(binary, argsFor(ports)), ports };
    } catch (error) {
      if (attempt >= PORT_ATTEMPTS || !String(error).includes("Address already in use")) throw error;
    }
  }
}

/** Sends `signal` and resolves once the child exited (SIGKILL after a few seconds). */
export function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}
