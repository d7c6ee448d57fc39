import { describe, expect, it } from "vitest";
import { describeRedisUrl, parseRedisClusterUrl } from "./redis-url.js";

describe("parseRedisClusterUrl", () => {
  it("reads a cluster's seed nodes and credentials", () => {
    expect(parseRedisClusterUrl("redis+cluster://10.0.0.1:6379,redis-2.internal:7000,[::1]:7001/")).toEqual({
      nodes: [
        { host: "10.0.0.1", port: 6379 },
        { host: "redis-2.internal", port: 7000 },
        { host: "::1", port: 7001 },
      ],
      tls: false,
    });
    expect(parseRedisClusterUrl("rediss+cluster://pes:p%40ss%3Aw0rd@10.0.0.1:6379")).toEqual({
      nodes: [{ host: "10.0.0.1", port: 6379 }],
      username: "pes",
      password: "p@ss:w0rd",
      tls: true,
    });
    expect(parseRedisClusterUrl("redis+cluster://:only-a-password@10.0.0.1:6379/")).toMatchObject({ password: "only-a-password" });
  });

  it("leaves a single Redis's URL to ioredis", () => {
    expect(parseRedisClusterUrl("redis://127.0.0.1:6379")).toBeUndefined();
    expect(parseRedisClusterUrl("rediss://user:pass@redis.internal:6380/2")).toBeUndefined();
  });

  it.each([
    "redis+cluster://",
    "redis+cluster://10.0.0.1",
    "redis+cluster://10.0.0.1:6379,/",
    "redis+cluster://10.0.0.1:99999/",
    "redis+cluster://10.0.0.1:6379/0",
  ])("refuses %s, without echoing credentials", (url) => {
    expect(() => parseRedisClusterUrl(url)).toThrow(/Redis Cluster URL/);
  });

  it("never names the credentials in an error", () => {
    expect(() => parseRedisClusterUrl("redis+cluster://pes:s3cret@10.0.0.1/")).toThrow(/^(?!.*s3cret)/s);
  });
});

describe("describeRedisUrl", () => {
  it("drops credentials from one Redis's URL and from a cluster's", () => {
    expect(describeRedisUrl("redis://user:s3cret@127.0.0.1:6379/1")).toBe("redis://127.0.0.1:6379/1");
    expect(describeRedisUrl("rediss+cluster://user:s3cret@10.0.0.1:6379,[::1]:7000/")).toBe("rediss+cluster://10.0.0.1:6379,[::1]:7000/");
    expect(describeRedisUrl("redis+cluster://user:s3cret@nonsense/")).toBe("(unparsable REDIS_URL)");
  });
});
