import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisCluster, type RedisClusterHandle } from "./redis-cluster.js";

const run = promisify(execFile);

/** redis-cli in cluster mode (-c: follows MOVED), against one node. */
async function cli(port: number, ...command: string[]): Promise<string> {
  return (await run("redis-cli", ["-c", "-p", String(port), ...command])).stdout.trim();
}

describe("startRedisCluster", () => {
  let cluster: RedisClusterHandle;

  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it("forms three masters with one replica each, named by a redis+cluster URL", async () => {
    expect(cluster.nodes).toHaveLength(6);
    const [first] = cluster.nodes;
    if (first === undefined) throw new Error("no node");
    const roles = await Promise.all(cluster.nodes.map(async (node) => (await cli(node.port, "ROLE")).split("\n")[0]));
    expect(roles.filter((role) => role === "master")).toHaveLength(3);
    expect(roles.filter((role) => role === "slave")).toHaveLength(3);
    expect(await cli(first.port, "CLUSTER", "INFO")).toContain("cluster_state:ok");
    expect(cluster.url).toBe(`redis+cluster://${cluster.nodes.map((node) => `127.0.0.1:${node.port}`).join(",")}/`);
    expect(await cli(first.port, "CONFIG", "GET", "appendonly")).toContain("yes");
  });

  it("names the master of a key's slot, and after killing it the replica serves the key", async () => {
    const [first] = cluster.nodes;
    if (first === undefined) throw new Error("no node");
    expect(await cli(first.port, "SET", "{failover}:key", "kept")).toBe("OK");
    const owner = await cluster.masterOf("{failover}:key");
    expect(await cli(owner.port, "GET", "{failover}:key")).toBe("kept");
    // Replication is asynchronous: wait until the replica acknowledged the write, so that it must survive.
    expect(await cli(owner.port, "WAIT", "1", "5000")).toBe("1");

    const { killed, promoted } = await cluster.killMaster("{failover}:key");
    expect(killed).toEqual(owner);
    expect(promoted.port).not.toBe(owner.port);
    expect(await cluster.masterOf("{failover}:key")).toEqual(promoted);
    expect((await cli(promoted.port, "ROLE")).split("\n")[0]).toBe("master");
    expect(await cli(promoted.port, "GET", "{failover}:key")).toBe("kept");
    await expect(cli(owner.port, "PING")).rejects.toThrow();
  }, 60_000);
});
