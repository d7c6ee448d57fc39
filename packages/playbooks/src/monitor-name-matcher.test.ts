import { describe, expect, it } from "vitest";
import { createMonitorNameMatcher, monitorNamePlaceholders, monitorNameProblem, monitorNameShape } from "./monitor-name-matcher.js";

type Row = [monitorName: string, title: string, expected: Record<string, string> | undefined];

// One monitor name, one title: undefined means "does not match".
const rows: Row[] = [
  ["High CPU on {{host}} in {{env}}", "High CPU on db-1 in prod", { host: "db-1", env: "prod" }],
  ["High CPU on {{host}} in {{env}}", "high cpu ON DB-1 in Prod", { host: "DB-1", env: "Prod" }],
  ["High CPU on {{host}} in {{env}}", "  High\tCPU \n on   db-1  in  prod  ", { host: "db-1", env: "prod" }],
  ["High  CPU   on {{host}}", "High CPU on db-1", { host: "db-1" }],
  ["High CPU on {{host}} in {{env}}", "High CPU on db 1 in eu in prod", { host: "db 1", env: "eu in prod" }],
  ["High CPU on {{host}} in {{env}}", "High CPU on  in prod", undefined],
  ["High CPU on {{host}} in {{env}}", "High CPU on db-1 in ", undefined],
  ["High CPU on {{host}} in {{env}}", "Very High CPU on db-1 in prod", undefined],
  ["High CPU on {{host}} in {{env}}", "High CPU on db-1 in prod!", { host: "db-1", env: "prod!" }],
  ["High CPU on {{host}}", "High CPU on db-1 (critical)", { host: "db-1 (critical)" }],
  ["Disk full", "disk FULL", {}],
  ["Disk full", "Disk full now", undefined],
  ["Disk full", "Disk ful", undefined],
  ["Rate (p99) > 1.5s [{{service}}]", "rate (P99) > 1.5S [checkout]", { service: "checkout" }],
  ["Rate (p99) > 1.5s [{{service}}]", "Rate Xp99) > 1x5s [checkout]", undefined],
  ["a.b*c+d?e^f$g|h\\i/{{x}}", "A.B*C+D?E^F$G|H\\I/val", { x: "val" }],
  ["a.b {{x}}", "aXb val", undefined],
  ["{{a}}{{b}}", "xyz", { a: "x", b: "yz" }],
  ["{{a}}{{b}}", "x yz", { a: "x", b: "yz" }],
  ["{{a}}{{b}}", "x", undefined],
  ["{{a}}-{{b}}", "x-y-z", { a: "x", b: "y-z" }],
  ["CPU:{{host}}", "CPU: db-1", { host: "db-1" }],
  ["{{host}} to {{host}} failed", "db-1 to DB-1 failed", { host: "db-1" }],
  ["{{host}} to {{host}} failed", "db-1 to db-2 failed", undefined],
  ["{{anything}}", "whatever the title says", { anything: "whatever the title says" }],
  ["{{anything}}", "   ", undefined],
  ["Ошибка в {{сервис}} ", "ошибка В Платежи", undefined], // placeholder names are ASCII: {{сервис}} is literal text
  ["Ошибка в {{service}}", "ОШИБКА в платежи-1", { service: "платежи-1" }],
  ["Café {{x}}", "CAFE\u0301 ok", { x: "ok" }], // NFD title, NFC name
  ["Latency on {{svc}} 🚨", "latency on checkout 🚨", { svc: "checkout" }],
  ["Latency on {{svc}} 🚨", "latency on checkout 🔥", undefined],
  ["{{ service }} is down", "payments is down", { service: "payments" }],
  ["Error rate {{x|regex}}", "Error rate 5%", { x: "5%" }],
  ["Queue {{q}} lag {{n}} (> {{limit}})", "queue orders lag 12s (> 5s)", { q: "orders", n: "12s", limit: "5s" }],
  ["{{a}} x {{a}}", "y x z x y x z", undefined], // shortest first value "y", then "z x y x z" is not "y"
  ["Alert {{name}}", "Alert {{name}}", { name: "{{name}}" }],
  ["Alert {{name}}", "Alert $1 \\k<v0> (?:", { name: "$1 \\k<v0> (?:" }],
];

describe("createMonitorNameMatcher", () => {
  it.each(rows)("%j against %j", (monitorName, title, expected) => {
    const matcher = createMonitorNameMatcher([{ name: "book", monitorNames: [monitorName] }]);
    const match = matcher.match(title);
    if (expected === undefined) {
      expect(match).toBeUndefined();
    } else {
      expect(match).toEqual({ bookName: "book", monitorName, attributes: expected });
    }
  });

  it("prefers the monitor name with the most literal characters, wherever it is declared", () => {
    const matcher = createMonitorNameMatcher([
      { name: "generic", monitorNames: ["{{alert}}", "High CPU on {{host}}"] },
      { name: "database", monitorNames: ["High CPU on db-{{n}}"] },
      { name: "exact", monitorNames: ["High CPU on db-1"] },
    ]);
    expect(matcher.match("High CPU on db-1")?.bookName).toBe("exact");
    expect(matcher.match("High CPU on db-2")).toEqual({
      bookName: "database",
      monitorName: "High CPU on db-{{n}}",
      attributes: { n: "2" },
    });
    expect(matcher.match("High CPU on web-2")?.bookName).toBe("generic");
    expect(matcher.match("Something else")).toEqual({
      bookName: "generic",
      monitorName: "{{alert}}",
      attributes: { alert: "Something else" },
    });
  });

  it("breaks ties by playbook order, then monitor-name order", () => {
    const matcher = createMonitorNameMatcher([
      { name: "first", monitorNames: ["{{x}} down", "Service {{y}}"] },
      { name: "second", monitorNames: ["Service {{z}}"] },
    ]);
    // "{{x}} down" (5 literal characters) and "Service {{y}}" (8) both match; the longer wins.
    expect(matcher.match("Service a down")?.monitorName).toBe("Service {{y}}");
    expect(matcher.match("Service b")).toEqual({ bookName: "first", monitorName: "Service {{y}}", attributes: { y: "b" } });
    const reversed = createMonitorNameMatcher([
      { name: "second", monitorNames: ["Service {{z}}"] },
      { name: "first", monitorNames: ["{{x}} down", "Service {{y}}"] },
    ]);
    expect(reversed.match("Service b")?.bookName).toBe("second");
  });

  it("restricts matching to one playbook when asked", () => {
    const matcher = createMonitorNameMatcher([
      { name: "specific", monitorNames: ["High latency on {{service}} in {{env}}"] },
      { name: "broad", monitorNames: ["High latency on {{service}}"] },
    ]);
    const title = "High latency on checkout in prod";
    expect(matcher.match(title)?.bookName).toBe("specific");
    expect(matcher.match(title, { bookName: "broad" })).toEqual({
      bookName: "broad",
      monitorName: "High latency on {{service}}",
      attributes: { service: "checkout in prod" },
    });
    expect(matcher.match("Other", { bookName: "broad" })).toBeUndefined();
    expect(matcher.match(title, { bookName: "unknown" })).toBeUndefined();
  });

  it("never matches a blank monitor name", () => {
    const matcher = createMonitorNameMatcher([{ name: "blank", monitorNames: ["   ", ""] }]);
    expect(matcher.match("")).toBeUndefined();
    expect(matcher.match(" ")).toBeUndefined();
  });

  it("explains every monitor name's verdict, with the same answer as match()", () => {
    const matcher = createMonitorNameMatcher([
      { name: "generic", monitorNames: ["{{alert}}", "High CPU on {{host}}"] },
      { name: "database", monitorNames: ["High CPU on db-{{n}}", "Disk full on {{host}}"] },
      { name: "twin", monitorNames: ["High CPU on db-{{m}}"] },
    ]);
    const title = "High  CPU on db-2";
    const verdicts = matcher.explain(title);
    expect(verdicts).toEqual([
      {
        bookName: "generic",
        monitorName: "{{alert}}",
        verdict: "outranked",
        reason: 'matches too, but "High CPU on db-{{n}}" is more specific (15 literal characters against 0)',
        captured: { alert: "High CPU on db-2" },
      },
      {
        bookName: "generic",
        monitorName: "High CPU on {{host}}",
        verdict: "outranked",
        reason: 'matches too, but "High CPU on db-{{n}}" is more specific (15 literal characters against 12)',
        captured: { host: "db-2" },
      },
      {
        bookName: "database",
        monitorName: "High CPU on db-{{n}}",
        verdict: "chosen",
        reason: "matches, and no other matching name is more specific",
        captured: { n: "2" },
      },
      { bookName: "database", monitorName: "Disk full on {{host}}", verdict: "no_match", reason: 'the text does not begin with "Disk full on"' },
      {
        bookName: "twin",
        monitorName: "High CPU on db-{{m}}",
        verdict: "outranked",
        reason: 'matches too, but "High CPU on db-{{n}}" has as many literal characters and comes first in configuration order',
        captured: { m: "2" },
      },
    ]);
    const chosen = verdicts.find((verdict) => verdict.verdict === "chosen");
    expect(matcher.match(title)).toEqual({ bookName: chosen?.bookName, monitorName: chosen?.monitorName, attributes: chosen?.captured });
  });

  it("says where a title stops matching a monitor name", () => {
    const reasons = (monitorName: string, title: string) =>
      createMonitorNameMatcher([{ name: "book", monitorNames: [monitorName] }])
        .explain(title)
        .map((verdict) => verdict.reason);
    expect(reasons("High latency on {{service}} in {{env}}", "High latency on checkout")).toEqual(['no "in" after {{service}}']);
    expect(reasons("High latency on {{service}} in {{env}}", "High latency on checkout in ")).toEqual(["nothing left for {{env}} to capture"]);
    expect(reasons("{{service}} {{env}}", "checkout")).toEqual(["nothing left for {{env}} to capture"]);
    expect(reasons("Disk full on {{host}}", "Disk full on")).toEqual(["nothing left for {{host}} to capture"]);
    expect(reasons("{{service}} is down", "checkout is down again")).toEqual(['the text goes on after "is down"']);
    expect(reasons("Disk full", "Disk full on db-1")).toEqual(['the text goes on after "Disk full"']);
    expect(reasons("{{host}} and {{host}} down", "a and b down")).toEqual(["{{host}} does not repeat the value it captured before"]);
    // Literal text is compared as match() compares it: case-insensitively, whitespace normalised.
    expect(reasons("Disk FULL on {{host}}", "disk full  on db-1")).toEqual(["matches, and no other matching name is more specific"]);
  });

  it("explains only the named playbook's monitor names when asked", () => {
    const matcher = createMonitorNameMatcher([
      { name: "specific", monitorNames: ["High latency on {{service}} in {{env}}"] },
      { name: "broad", monitorNames: ["High latency on {{service}}"] },
    ]);
    expect(matcher.explain("High latency on checkout in prod", { bookName: "broad" })).toEqual([
      {
        bookName: "broad",
        monitorName: "High latency on {{service}}",
        verdict: "chosen",
        reason: "matches, and no other matching name is more specific",
        captured: { service: "checkout in prod" },
      },
    ]);
  });

  it("rejects a monitor name with a NUL character", () => {
    expect(() => createMonitorNameMatcher([{ name: "x", monitorNames: ["a\u0000b"] }])).toThrow(/NUL/);
  });

  it("matches long adversarial titles without catastrophic backtracking", () => {
    const matcher = createMonitorNameMatcher([
      {
        name: "adversarial",
        monitorNames: [
          "{{a}}{{b}}{{c}}{{d}}!",
          "{{a}} in {{b}} in {{c}} in {{d}} at {{e}}",
          "{{a}} {{b}} {{c}} {{d}} {{e}} {{f}} END",
          "x{{a}}x{{b}}x{{c}}x{{d}}y",
        ],
      },
    ]);
    const titles = ["a".repeat(10_000), " in".repeat(3_400), "a ".repeat(5_000), "x".repeat(10_000), `${"x".repeat(10_000)}y`, `${" in x".repeat(2_000)} at`];
    const results = titles.map((title) => matcher.match(title)?.monitorName);
    expect(results).toEqual([undefined, undefined, undefined, undefined, "x{{a}}x{{b}}x{{c}}x{{d}}y", undefined]);
    const long = `${"db ".repeat(3_000)}in prod in eu in x at now`;
    expect(matcher.match(long)?.attributes).toEqual({
      a: "db ".repeat(3_000).trim(),
      b: "prod",
      c: "eu",
      d: "x",
      e: "now",
    });
  });
});

describe("monitorNameShape", () => {
  it("ignores placeholder names, case and whitespace", () => {
    expect(monitorNameShape("High  CPU on {{host}}")).toBe(monitorNameShape("high cpu ON {{ node }}"));
    expect(monitorNameShape("High CPU on {{host}}")).not.toBe(monitorNameShape("High CPU on {{host}}!"));
  });
});

describe("monitorNamePlaceholders", () => {
  it("lists each placeholder once, in order", () => {
    expect(monitorNamePlaceholders("{{b}} and {{a}} and {{b}}")).toEqual(["b", "a"]);
  });
});

describe("monitorNameProblem", () => {
  it.each([
    ["High CPU on {{host}}", undefined],
    ["Tabs\tand\nnewlines are whitespace", undefined],
    [" \t ", "a monitor name must not be blank"],
    ["bell\u0007", "a monitor name must not contain control characters"],
    ["nul\u0000", "a monitor name must not contain control characters"],
    ["CPU {{host|regex}}", "a monitor name placeholder takes no |filter: it captures text from the title"],
  ])("%j → %s", (monitorName, problem) => {
    expect(monitorNameProblem(monitorName)).toBe(problem);
  });
});
