import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { ChildHandle } from "./child-processes.js";

/** The last lines of a child's log, for an error message that says why it did not start. */
export function logTail(logPath: string, lines = 20): string {
  try {
    return readFileSync(logPath, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/**
 * Polls `probe` until it returns true. Fails at once when `child` exits (with its log tail), or when
 * `timeoutMs` passes. Polling is right here: the harness waits for another process's readiness, which
 * it can only observe from outside.
 */
export async function waitUntil(
  what: string,
  probe: () => Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number; child?: ChildHandle; logPath?: string },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (options.child?.hasExited()) {
      throw new Error(`${what}: ${options.child.name} exited\n${options.logPath ? logTail(options.logPath) : ""}`);
    }
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) {
      throw new Error(`${what}: not ready after ${options.timeoutMs} ms\n${options.logPath ? logTail(options.logPath) : ""}`);
    }
    await sleep(options.intervalMs ?? 50);
  }
}
