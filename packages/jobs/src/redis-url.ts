/** A Redis Cluster as REDIS_URL names it: its seed nodes and the credentials every node takes. */
export interface RedisClusterTarget {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  /** `rediss+cluster://`: TLS to every node. */
  tls: boolean;
}

/** The scheme of a Redis Cluster URL (`rediss+cluster://` with TLS). */
const CLUSTER_URL = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^@/]+)\/?$/;
/** One seed node: `host:port`, an IPv6 host in brackets. */
const NODE = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/**
 * A Redis Cluster URL (`redis+cluster://[user:password@]host1:port1,host2:port2/`, `rediss+cluster://`
 * for TLS) → its nodes and credentials; undefined for a single Redis's URL (`redis://`, `rediss://`),
 * which ioredis reads itself. Any node will do as a seed: the client learns the rest from the cluster.
 * @throws Error for a cluster URL it cannot read, naming the part at fault but never the credentials.
 */
export function parseRedisClusterUrl(url: string): RedisClusterTarget | undefined {
  if (!/^rediss?\+cluster:/.test(url)) return undefined;
  const match = CLUSTER_URL.exec(url);
  if (match === null) throw new Error("a Redis Cluster URL is redis+cluster://[user:password@]host:port,host:port/ with nothing after the last /");
  const [, scheme, credentials, hosts = ""] = match;
  const nodes = hosts.split(",").map((node) => {
    const parts = NODE.exec(node);
    const port = Number(parts?.[2]);
    if (parts === null || port < 1 || port > 65_535) throw new Error(`"${node}" in the Redis Cluster URL is not host:port`);
    return { host: (parts[1] ?? "").replace(/^\[(.*)\]$/, "$1"), port };
  });
  const target: RedisClusterTarget = { nodes, tls: scheme === "rediss" };
  if (credentials !== undefined) {
    const colon = credentials.indexOf(":");
    const [username, password] = colon === -1 ? [credentials, ""] : [credentials.slice(0, colon), credentials.slice(colon + 1)];
    if (username !== "") target.username = decodeURIComponent(username);
    if (password !== "") target.password = decodeURIComponent(password);
  }
  return target;
}

/** The URL without credentials, fit for a log line. */
export function describeRedisUrl(url: string): string {
  try {
    const cluster = parseRedisClusterUrl(url);
    if (cluster !== undefined) {
      const hosts = cluster.nodes.map(({ host, port }) => `${host.includes(":") ? `[${host}]` : host}:${port}`);
      return `${cluster.tls ? "rediss" : "redis"}+cluster://${hosts.join(",")}/`;
    }
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "(unparsable REDIS_URL)";
  }
}
