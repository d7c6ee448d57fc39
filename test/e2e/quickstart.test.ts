import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { freePort } from "@pes/local-services";
import { repoRoot } from "../support/processes.js";

// The README's first command, as a newcomer runs it: it must print a token and a curl that returns a
// meaningful investigation (the demo incident), and Ctrl-C must stop everything it started.
describe("the quickstart", () => {
  it("prints a token and a curl whose investigation names the demo incident's cause, with metrics, logs and a change", async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), QUEUE_PREFIX: `quickstart-${port}` };
    delete env.REDIS_URL;
    const child = spawn(process.execPath, [`${repoRoot}scripts/quickstart.mjs`], { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    try {
      await new Promise<void>((resolve, reject) => {
        const check = () => (/-d '\{.*\}'/.test(output) ? resolve() : undefined);
        child.stdout.on("data", check);
        child.once("exit", () => reject(new Error(`quickstart exited early:\n${output}`)));
      });
      const token = /export TOKEN=(\S+)/.exec(output)?.[1] ?? "";
      const body = /-d '(\{.*\})'/.exec(output)?.[1] ?? "";
      expect(token.split(".")).toHaveLength(3);

      const list = await fetch(`http://127.0.0.1:${port}/playbook`, { headers: { authorization: `Bearer ${token}` } });
      expect(list.status).toBe(200);

      const response = await fetch(`http://127.0.0.1:${port}/playbook/execution`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body,
      });
      expect(response.status).toBe(200);
      const result = (await response.json()) as PlaybookExecutionResult;
      expect(result.error).toBeUndefined();
      // Metrics, logs and a change side by side: the deploy 4 minutes before the errors is the likely
      // cause, the error ratio and the new log line follow it, each claim citing its action.
      expect(result.highlights).toMatch(/likely cause: deploy of checkout to v1\.42 at \d\d:\d\d UTC \(Last deploy of checkout\), 4 min before/);
      expect(result.highlights).toMatch(/error ratio/);
      expect(result.highlights).toMatch(/Error logs of checkout[^.]*price lookup failed/);
      const logs = result.actionResults?.find((action) => action.title === "Error logs of checkout");
      expect(logs?.shortAnswer).toMatch(/price lookup failed[^—]*not seen in the hour before/);
      expect(logs?.shortAnswer).not.toMatch(/cache miss storm/);
      expect(result.actionResults?.find((action) => action.title === "Last deploy of checkout")?.shortAnswer).toMatch(/v1\.42/);
    } finally {
      const exited = child.exitCode === null ? once(child, "exit") : Promise.resolve([child.exitCode]);
      child.kill("SIGINT");
      const [code] = await exited;
      expect(code).toBe(0);
    }
  });
});
