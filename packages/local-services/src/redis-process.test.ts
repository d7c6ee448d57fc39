import { once } from "node:events";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { findOnPath, kill, spawnOnFreePorts } from "./redis-process.js";

describe("spawnOnFreePorts", () => {
  it("starts again on fresh ports when a port picked was taken before redis-server could bind it", async () => {
    const binary = findOnPath("redis-server");
    if (binary === undefined) throw new Error("redis-server not found: install Debian's redis-server package");
    // A port taken by someone else between the pick and the bind, as a busy host's ephemeral port would be.
    const taker = createServer().listen(0, "127.0.0.1");
    await once(taker, "listening");
    const taken = (taker.address() as { port: number }).port;
    const tried: number[] = [];
    try {
      const { child, ports } = await spawnOnFreePorts(binary, 1, ([port]) => {
        const chosen = tried.length === 0 ? taken : (port ?? 0);
        tried.push(chosen);
        return ["--port", String(chosen), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
      });
      expect(tried).toHaveLength(2);
      expect(tried[0]).toBe(taken);
      expect(ports[0]).toBe(tried[1]);
      await kill(child, "SIGTERM");
    } finally {
      taker.close();
    }
  });
});
