import type { ChildProcess } from "node:child_process";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { findOnPath, kill, spawnOnFreePorts } from "./redis-process.js";

const run = promisify(execFile);

export interface StartRedisClusterOptions {
  /**
   * How long a master may be unreachable before its replica takes over (`cluster-node-timeout`). Small
   * by default (2 s) so that a failover test waits seconds, not the production default's 15.
   */
  nodeTimeoutMs?: number;
}

/** One `redis-server` of the cluster. */
export interface ClusterNode {
  /** `redis://127.0.0.1:port` */
  url: string;
  port: number;
}

/** A failover a test caused: the master it killed and the replica that took over its slots. */
export interface Failover {
  killed: ClusterNode;
  promoted: ClusterNode;
}

export interface RedisClusterHandle {
  /** The whole cluster as the service's REDIS_URL takes it: `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,…/`. */
  url: string;
  /** Every node, masters and replicas, as started (killed ones included). */
  nodes: readonly ClusterNode[];
  /** The master that serves `key`'s hash slot now. */
  masterOf(key: string): Promise<ClusterNode>;
  /**
   * SIGKILLs the master serving `key`'s slot (default: any master) and resolves once its replica has
   * taken over and every surviving node says `cluster_state:ok`.
   */
  killMaster(key?: string): Promise<Failover>;
  /** Stops every node and removes their data directories. */
  stop(): Promise<void>;
}

const MASTERS = 3;
const DEFAULT_NODE_TIMEOUT_MS = 2_000;
/** How long the cluster may take to form, or to fail over, before the test is told it did not. */
const SETTLE_TIMEOUT_MS = 30_000;
const POLL_MS = 100;

interface RunningNode extends ClusterNode {
  child: ChildProcess;
  dir: string;
  alive: boolean;
}

/**
 * A Redis Cluster for tests: three masters with one replica each, `redis-server` processes in cluster
 * mode on free loopback ports (their bus ports too), each with its own throw-away data directory and
 * AOF on, joined by `redis-cli --cluster create`. It resolves once every node says `cluster_state:ok`
 * and every replica is in sync with its master, so that a failover can happen from the first command.
 */
export async function startRedisCluster(options: StartRedisClusterOptions = {}): Promise<RedisClusterHandle> {
  const binary = findOnPath("redis-server");
  if (binary === undefined || findOnPath("redis-cli") === undefined) {
    throw new Error("redis-server and redis-cli not found: install Debian's redis-server package");
  }
  const nodeTimeoutMs = options.nodeTimeoutMs ?? DEFAULT_NODE_TIMEOUT_MS;
  const nodes: RunningNode[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => kill(node.child, "SIGKILL")));
    await Promise.all(nodes.map((node) => rm(node.dir, { recursive: true, force: true })));
  };
  try {
    for (let i = 0; i < MASTERS * 2; i++) {
      const dir = await mkdtemp(join(tmpdir(), "pes-redis-cluster-"));
      const started = await spawnOnFreePorts(binary, 2, ([port, busPort]) => [
        "--port",
        String(port),
        // An explicit bus port: port + 10000 (the default) may be taken, or past 65535.
        "--cluster-port",
        String(busPort),
        "--bind",
        "127.0.0.1",
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        "yes",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        String(nodeTimeoutMs),
      ]).catch(async (error: unknown) => {
        await rm(dir, { recursive: true, force: true });
        throw error;
      });
      const { child } = started;
      const port = started.ports[0] ?? 0;
      nodes.push({ url: `redis://127.0.0.1:${port}`, port, child, dir, alive: true });
    }
    await run("redis-cli", ["--cluster", "create", ...nodes.map((node) => `127.0.0.1:${node.port}`), "--cluster-replicas", "1", "--cluster-yes"]);
    await settle(nodes, "the cluster did not form");
  } catch (error) {
    await stop();
    throw error;
  }

  const alive = () => nodes.filter((node) => node.alive);
  const masterOf = async (key: string): Promise<RunningNode> => {
    const [asked] = alive();
    if (asked === undefined) throw new Error("no node of the cluster is running");
    const slot = Number((await cli(asked.port, "CLUSTER", "KEYSLOT", key)).trim());
    const owner = (await clusterNodes(asked.port)).find(
      (entry) => entry.master && !entry.failed && entry.slots.some(([from, to]) => from <= slot && slot <= to),
    );
    const node = nodes.find((candidate) => candidate.port === owner?.port);
    if (node === undefined) throw new Error(`no master serves slot ${slot}`);
    return node;
  };

  return {
    url: `redis+cluster://${nodes.map((node) => `127.0.0.1:${node.port}`).join(",")}/`,
    nodes: nodes.map(({ url, port }) => ({ url, port })),
    async masterOf(key) {
      const { url, port } = await masterOf(key);
      return { url, port };
    },
    async killMaster(key) {
      const victim = key === undefined ? await anyMaster(alive()) : await masterOf(key);
      const replicaPorts = (await clusterNodes(victim.port)).filter((entry) => entry.masterPort === victim.port).map((entry) => entry.port);
      if (replicaPorts.length === 0) throw new Error(`the master on ${victim.port} has no replica to take over`);
      victim.alive = false;
      await kill(victim.child, "SIGKILL");
      await settle(alive(), "no replica took over after the master was killed");
      const [asked] = alive();
      const promoted = asked === undefined ? undefined : (await clusterNodes(asked.port)).find((entry) => entry.master && replicaPorts.includes(entry.port));
      const node = nodes.find((candidate) => candidate.port === promoted?.port);
      if (node === undefined) throw new Error("the killed master's replica is not a master");
      return { killed: { url: victim.url, port: victim.port }, promoted: { url: node.url, port: node.port } };
    },
    stop,
  };
}

/** One line of CLUSTER NODES, as far as these tests need it. */
interface NodeEntry {
  port: number;
  master: boolean;
  failed: boolean;
  /** For a replica: its master's port. */
  masterPort?: number;
  slots: [number, number][];
}

/** CLUSTER NODES as seen by the node on `port`: `<id> <ip:port@bus> <flags> <master id|-> … <slot ranges>`. */
async function clusterNodes(port: number): Promise<NodeEntry[]> {
  const lines = (await cli(port, "CLUSTER", "NODES")).trim().split("\n");
  const rows = lines.map((line) => line.trim().split(" "));
  const portOf = (address: string | undefined) => Number(address?.split("@")[0]?.split(":").pop());
  const portById = new Map(rows.map((row) => [row[0] ?? "", portOf(row[1])]));
  return rows.map((row) => {
    const flags = (row[2] ?? "").split(",");
    const masterPort = portById.get(row[3] ?? "-");
    const slots = row
      .slice(8)
      .filter((range) => !range.startsWith("["))
      .map((range): [number, number] => {
        const [from = "", to = from] = range.split("-");
        return [Number(from), Number(to)];
      });
    return {
      port: portOf(row[1]),
      master: flags.includes("master"),
      failed: flags.includes("fail") || flags.includes("fail?"),
      ...(masterPort === undefined ? {} : { masterPort }),
      slots,
    };
  });
}

async function anyMaster(nodes: RunningNode[]): Promise<RunningNode> {
  const [asked] = nodes;
  if (asked === undefined) throw new Error("no node of the cluster is running");
  const master = (await clusterNodes(asked.port)).find((entry) => entry.master && !entry.failed);
  const node = nodes.find((candidate) => candidate.port === master?.port);
  if (node === undefined) throw new Error("no master found");
  return node;
}

/**
 * Waits until every node says `cluster_state:ok`, sees no node it counts as failing among `nodes`, and
 * every replica's link to its master is up.
 */
async function settle(nodes: readonly RunningNode[], failure: string): Promise<void> {
  const ports = new Set(nodes.map((node) => node.port));
  const until = Date.now() + SETTLE_TIMEOUT_MS;
  let last = "";
  for (;;) {
    try {
      const states = await Promise.all(
        nodes.map(async (node) => {
          const [info, replication, seen] = await Promise.all([
            cli(node.port, "CLUSTER", "INFO"),
            cli(node.port, "INFO", "replication"),
            clusterNodes(node.port),
          ]);
          const ok = info.includes("cluster_state:ok");
          const linked = !replication.includes("role:slave") || replication.includes("master_link_status:up");
          const agreed = seen.filter((entry) => ports.has(entry.port)).every((entry) => !entry.failed);
          return ok && linked && agreed;
        }),
      );
      if (states.every(Boolean)) return;
      last = `not settled: ${states.map((state, index) => `${nodes[index]?.port}=${state}`).join(" ")}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > until) throw new Error(`${failure} within ${SETTLE_TIMEOUT_MS} ms (${last})`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function cli(port: number, ...command: string[]): Promise<string> {
  return (await run("redis-cli", ["-p", String(port), ...command])).stdout;
}
