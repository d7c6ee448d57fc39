import { existsSync } from "node:fs";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startRedis, uniquePrefix, type RedisHandle } from "./redis.js";

/** Sends inline commands over one connection and returns the raw RESP bytes once `expectedReplies` lines arrived. */
function send(url: string, commands: string[], expectedReplies: number): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      received += chunk;
      if (received.split("\r\n").length - 1 >= expectedReplies) {
        socket.end();
        resolve(received);
      }
    });
    socket.on("error", reject);
    socket.write(commands.map((command) => `${command}\r\n`).join(""));
  });
}

describe("startRedis (spawned redis-server)", () => {
  let redis: RedisHandle | undefined;

  afterEach(async () => {
    await redis?.stop();
    redis = undefined;
  });

  it("serves on a free loopback port and stops cleanly", async () => {
    redis = await startRedis({ spawn: true });
    expect(redis.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    expect(redis.url).not.toBe("redis://127.0.0.1:6379");
    expect(await send(redis.url, ["PING"], 1)).toBe("+PONG\r\n");
    expect(await send(redis.url, ["CONFIG GET appendonly"], 5)).toContain("no");

    const url = redis.url;
    await redis.stop();
    redis = undefined;
    await expect(send(url, ["PING"], 1)).rejects.toThrow(/ECONNREFUSED/);
  });

  it("with appendOnly, keeps every acknowledged write across a crash", async () => {
    redis = await startRedis({ spawn: true, appendOnly: true });
    expect(await send(redis.url, ["SET survivor yes"], 1)).toBe("+OK\r\n");
    await redis.restart({ crash: true });
    expect(await send(redis.url, ["GET survivor"], 2)).toBe("$3\r\nyes\r\n");
  });

  it("without appendOnly, a restart starts empty", async () => {
    redis = await startRedis({ spawn: true });
    expect(await send(redis.url, ["SET gone yes"], 1)).toBe("+OK\r\n");
    await redis.restart();
    expect(await send(redis.url, ["GET gone"], 1)).toBe("$-1\r\n");
  });

  it("with a password, refuses clients that do not give it", async () => {
    redis = await startRedis({ password: "s3cret" });
    expect(redis.url).toMatch(/^redis:\/\/:s3cret@127\.0\.0\.1:\d+$/);
    const { port } = new URL(redis.url);
    expect(await send(`redis://127.0.0.1:${port}`, ["PING"], 1)).toMatch(/^-NOAUTH/);
    expect(await send(redis.url, ["AUTH s3cret", "PING"], 2)).toBe("+OK\r\n+PONG\r\n");
  });

  it("runs whileDown between the stop and the start of a restart", async () => {
    redis = await startRedis({ spawn: true });
    const url = redis.url;
    let pingWhileDown = "";
    await redis.restart({
      crash: true,
      whileDown: async () => {
        pingWhileDown = await send(url, ["PING"], 1).catch((error: unknown) => String(error));
      },
    });
    expect(pingWhileDown).toMatch(/ECONNREFUSED/);
    expect(await send(url, ["PING"], 1)).toBe("+PONG\r\n");
  });

  it("removes its data directory on stop", async () => {
    redis = await startRedis({ spawn: true });
    const reply = await send(redis.url, ["CONFIG GET dir"], 5);
    const dir = reply.split("\r\n").find((line) => line.includes("pes-redis-"));
    expect(dir).toBeDefined();
    expect(existsSync(dir ?? "")).toBe(true);
    await redis.stop();
    redis = undefined;
    expect(existsSync(dir ?? "")).toBe(false);
  });
});

describe("uniquePrefix", () => {
  it("names the test and differs per call", () => {
    const a = uniquePrefix("queue");
    expect(a).toMatch(/^test-queue-[0-9a-f]{8}$/);
    expect(uniquePrefix("queue")).not.toBe(a);
  });
});
