import { describe, expect, it } from "vitest";
import { createTemplateMiner, maskLine, MAX_TEMPLATE_LINE_CHARS } from "./log-templates.js";

describe("maskLine", () => {
  it.each([
    ["2026-11-20T14:05:33.123Z ERROR connection refused to 10.0.3.7:5432 after 1500ms", "<time> ERROR connection refused to <ip>:<num> after <duration>"],
    [
      'level=error msg="could not reach db" host=10.0.3.7 took=2.5s pod=checkout-7d9f8b6c4-x2k4p',
      'level=error msg="could not reach db" host=<ip> took=<duration> pod=<id>',
    ],
    [
      '{"level":"error","msg":"user \\"bob\\" not found","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","ts":"2026-11-20T14:05:33Z"}',
      '{"level":"error","msg":"user \\"bob\\" not found","trace_id":"<hex>","ts":"<time>"}',
    ],
    ["can't connect to 'orders-db' as alice@example.com, request 550e8400-e29b-41d4-a716-446655440000", "can't connect to <str> as <email>, request <uuid>"],
    [
      "GET /api/v1/orders/12345 HTTP/1.1 500 45µs from fe80::1 and 2001:db8::8a2e:370:7334 at 14:05:33",
      "GET /api/v<num>/orders/<num> HTTP/<num> <num> <duration> from <ip> and <ip> at <time>",
    ],
    ["panic at 0x7ffdf00d in goroutine 42 (v1.42, http2, k8s) for user42", "panic at <hex> in goroutine <num> (v<num>, http<num>, k<num>s) for <id>"],
    ['timeout after 2m30s waiting for lock on table "orders"', "timeout after <duration> waiting for lock on table <str>"],
    ["std::vector<int> overflow", "std::vector<int> overflow"],
    ["  spaces\tand\ttabs  ", "spaces and tabs"],
    // Redacted values mask as the values would have: a redacted bundle replays to the same templates.
    [
      "dial tcp «ipv4:3f9a1c0b»:5432 for «email:0a1b2c3d» card «card:77aa» key «api-key:9f00» «employee-id:12ab»",
      "dial tcp <ip>:<num> for <email> card <num> key <id> <id>",
    ],
  ])("%s", (line, masked) => {
    expect(maskLine(line)).toBe(masked);
  });

  it("templates a long line on its start only", () => {
    const masked = maskLine(`${"word ".repeat(MAX_TEMPLATE_LINE_CHARS)}end`);
    expect(masked.length).toBeLessThanOrEqual(MAX_TEMPLATE_LINE_CHARS);
    expect(masked).not.toContain("end");
  });
});

describe("createTemplateMiner", () => {
  function group(lines: readonly string[]): Map<string, number> {
    const miner = createTemplateMiner();
    const ids = lines.map((line) => miner.add(line));
    const counts = new Map<string, number>();
    for (const id of ids) counts.set(miner.template(id), (counts.get(miner.template(id)) ?? 0) + 1);
    return counts;
  }

  it("merges lines that differ in a variable word, Drain-style", () => {
    expect(group(["login failed for user alice", "login failed for user bob", "login failed for user carol"])).toEqual(
      new Map([["login failed for user <*>", 3]]),
    );
  });

  it("keeps apart lines that differ in what they say", () => {
    expect(
      group([
        "connection refused to 10.0.3.7:5432",
        "connection reset by 10.0.3.8:5432",
        "connection refused to 10.0.3.9:5432",
        "GET /api/cart 200 12ms",
        "GET /api/cart 200 15ms extra",
      ]),
    ).toEqual(
      new Map([
        ["connection refused to <ip>:<num>", 2],
        ["connection reset by <ip>:<num>", 1],
        ["GET /api/cart <num> <duration>", 1],
        ["GET /api/cart <num> <duration> extra", 1],
      ]),
    );
  });

  it("groups the same lines the same way every time", () => {
    const lines = Array.from({ length: 300 }, (_, index) => `worker ${["a", "b", "c"][index % 3]} took ${index}ms on shard ${index % 7}`);
    expect([...group(lines)]).toEqual([...group(lines)]);
    expect(group(lines)).toEqual(new Map([["worker <*> took <duration> on shard <num>", 300]]));
  });

  it("still groups identical lines once a group holds many templates", () => {
    // Over a hundred distinct shapes of the same length and first word: later ones are matched exactly.
    const lines = Array.from(
      { length: 150 },
      (_, index) => `event ${"abcdefghijklmnopqrstuvwxyz"[index % 26]}${"zyxwvutsrqponmlkjihgfedcba"[Math.floor(index / 26)]} happened`,
    );
    const counts = group([...lines, ...lines]);
    expect([...counts.values()].reduce((sum, count) => sum + count, 0)).toBe(300);
  });
});
