import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findOnPath, kill, READY_LINE, spawnOnFreePorts, spawnUntilReady } from "./redis-process.js";

export interface StartRedisOptions {
  /**
   * Turn on AOF (`appendonly yes`, `appendfsync always`) so that a test can crash or restart Redis
   * and find every accepted write again, as production runs it.
   */
  appendOnly?: boolean;
  /**
   * Always spawn a `redis-server` child, ignoring REDIS_URL and Docker: for tests that must kill or
   * restart Redis, which only a child process allows.
   */
  spawn?: boolean;
  /**
   * Spawn a `redis-server` (as `spawn` does) that requires this password (`requirepass`); the handle's
   * url carries it. For tests of clients given wrong or no credentials.
   */
  password?: string;
}

export interface RedisHandle {
  /** `redis://host:port` of a Redis that the caller may use freely (with its own key prefix). */
  url: string;
  /**
   * Stops the server and removes its data directory. A no-op when the Redis came from REDIS_URL,
   * which the caller does not own.
   */
  stop(): Promise<void>;
  /**
   * Stops the server (`crash: true` → SIGKILL, else a clean shutdown) and starts it again on the same
   * port and data directory. Only a spawned `redis-server` can do this; the other sources throw.
   */
  restart(options?: {
    crash?: boolean;
    /** Runs while the server is down, before it starts again: to see how clients behave during an outage. */
    whileDown?: () => Promise<void>;
  }): Promise<void>;
}

const REDIS_IMAGE = "redis:7-alpine";

/**
 * A Redis for tests, the quickstart and the benchmark. In order of preference: the one REDIS_URL
 * names (left running), a `redis:7-alpine` container when a Docker engine is reachable, or a
 * `redis-server` from PATH on a free port with a throw-away data directory. It never falls back to a
 * Redis that happens to listen on 6379: a test must not touch data it did not create.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisHandle> {
  const fromEnv = process.env.REDIS_URL;
  const spawnOwn = options.spawn === true || options.password !== undefined;
  if (!spawnOwn && fromEnv !== undefined && fromEnv !== "") {
    return {
      url: fromEnv,
      stop: async () => {},
      restart: async () => {
        throw new Error("cannot restart the Redis named by REDIS_URL: call startRedis({ spawn: true }) to get a restartable one");
      },
    };
  }
  if (!spawnOwn && dockerEngineReachable()) return startRedisContainer(options);
  const binary = findOnPath("redis-server");
  if (binary === undefined) {
    throw new Error("redis-server not found: install Debian's redis-server package or set REDIS_URL");
  }
  return startRedisProcess(binary, options);
}

/** `test-<name>-<random>`: one queue/key prefix per test file, so that files never see each other's jobs. */
export function uniquePrefix(name: string): string {
  return `test-${name}-${randomUUID().slice(0, 8)}`;
}

function dockerEngineReachable(): boolean {
  const host = process.env.DOCKER_HOST;
  return (host !== undefined && host !== "") || existsSync("/var/run/docker.sock");
}

async function startRedisContainer(options: StartRedisOptions): Promise<RedisHandle> {
  // Loaded lazily: most runs here have no Docker engine and should not pay for the import.
  const { GenericContainer, Wait } = await import("testcontainers");
  const command = ["redis-server", ...(options.appendOnly ? ["--appendonly", "yes", "--appendfsync", "always"] : [])];
  const container = await new GenericContainer(REDIS_IMAGE)
    .withExposedPorts(6379)
    .withCommand(command)
    .withWaitStrategy(Wait.forLogMessage(READY_LINE))
    .start();
  return {
    url: `redis://${container.getHost()}:${container.getMappedPort(6379)}`,
    stop: async () => {
      await container.stop();
    },
    restart: async () => {
      // A restarted container may come back on another host port, which would break the URL callers hold.
      throw new Error("cannot restart a Redis container on a stable port: call startRedis({ spawn: true }) to get a restartable one");
    },
  };
}

async function startRedisProcess(binary: string, options: StartRedisOptions): Promise<RedisHandle> {
  const dir = await mkdtemp(join(tmpdir(), "pes-redis-"));
  const argsOn = (port: number) => [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--dir",
    dir,
    ...(options.appendOnly ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]),
    ...(options.password !== undefined ? ["--requirepass", options.password] : []),
  ];
  let child: ChildProcess;
  let port: number;
  try {
    const started = await spawnOnFreePorts(binary, 1, ([picked]) => argsOn(picked ?? 0));
    child = started.child;
    port = started.ports[0] ?? 0;
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const args = argsOn(port);
  let stopped = false;
  const url = new URL(`redis://127.0.0.1:${port}`);
  if (options.password !== undefined) url.password = options.password;
  return {
    url: url.toString(),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await kill(child, "SIGKILL");
      await rm(dir, { recursive: true, force: true });
    },
    restart: async ({ crash = false, whileDown } = {}) => {
      if (stopped) throw new Error("this Redis was stopped");
      await kill(child, crash ? "SIGKILL" : "SIGTERM");
      try {
        await whileDown?.();
      } finally {
        child = await spawnUntilReady(binary, args);
      }
    },
  };
}
