import { readFileSync } from "node:fs";
import { join } from "node:path";
import { spawnChild, type ChildHandle } from "./child-processes.js";
import { waitUntil } from "./wait-until.js";

/**
 * Starts the stub data source in its own process (stub-data-source-main.js): one server per entry, each
 * answering after its delay. Resolves once it has reported itself ready.
 */
export async function startStubProcess(logDir: string, servers: readonly { port: number; delayMs: number }[]): Promise<ChildHandle> {
  const logPath = join(logDir, "stub-data-source.log");
  const child = spawnChild({
    name: "stub-data-source",
    command: process.execPath,
    args: [new URL("./stub-data-source-main.js", import.meta.url).pathname],
    env: { ...process.env, STUB_LISTEN: servers.map(({ port, delayMs }) => `${port}:${delayMs}`).join(",") },
    logPath,
  });
  await waitUntil("stub data source", async () => /ready/.test(readFileSync(logPath, "utf8")), {
    timeoutMs: 10_000,
    child,
    logPath,
  });
  return child;
}
