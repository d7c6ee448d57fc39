import { shortAnswer, type Evidence } from "@pes/analysis";
import { describe, expect, it } from "vitest";
import { NO_SECRETS, resolveSecrets } from "./data-source-secrets.js";
import { redactEvidence, redactSecrets } from "./redaction.js";

/** What a data source's answers are redacted of: its secrets as resolved at start. */
const secretsOf = (dataSource: unknown, env: Record<string, string>) => resolveSecrets(dataSource, { env }).secrets.redacted;

describe("resolveSecrets(…).redacted", () => {
  const env = { PES_TOKEN: "tok-123456", PES_PASSWORD: "pa:ss w/rd", PES_KEY: "key-123456" };

  it("finds a bearer token", () => {
    expect(secretsOf({ type: "prometheus", url: "http://p", auth: { bearerToken: { env: "PES_TOKEN" } } }, env)).toEqual(["tok-123456"]);
  });

  it("finds a basic password and the base64 username:password sent in the header", () => {
    const dataSource = { type: "prometheus", url: "http://p", auth: { basic: { username: "reader", password: { env: "PES_PASSWORD" } } } } as const;
    expect(secretsOf(dataSource, env)).toEqual([Buffer.from("reader:pa:ss w/rd").toString("base64"), "pa:ss w/rd"]);
  });

  it("finds secret headers, not literal ones, and skips unset variables", () => {
    const dataSource = { type: "http", url: "http://h", headers: { "x-team": "sre", "x-api-key": { env: "PES_KEY" }, "x-other": { env: "PES_UNSET" } } } as const;
    expect(secretsOf(dataSource, env)).toEqual(["key-123456"]);
  });

  it("finds nothing in a data source without secrets", () => {
    expect(secretsOf({ type: "prometheus", url: "http://p" }, env)).toEqual([]);
  });
});

describe("redactSecrets", () => {
  const secret = "pa:ss w/rd+\"x\"";

  it.each([
    ["as it is", secret],
    ["encodeURIComponent", encodeURIComponent(secret)],
    ["lower-case hex", encodeURIComponent(secret).toLowerCase()],
    ["form encoding", new URLSearchParams({ s: secret }).toString().slice(2)],
    ["JSON-escaped", JSON.stringify(secret).slice(1, -1)],
  ])("replaces the secret %s", (_form, written) => {
    expect(redactSecrets(`before ${written} after ${written}`, [secret])).toBe("before [redacted] after [redacted]");
  });

  it("replaces a secret that holds another one whole", () => {
    expect(redactSecrets("Basic cmVhZGVyOnNlY3JldA==", ["cmVhZGVyOnNlY3JldA==", "cmVh"])).toBe("Basic [redacted]");
  });

  it("leaves secrets shorter than 4 characters, which would garble ordinary text", () => {
    expect(redactSecrets("a bc abc", ["abc"])).toBe("a bc abc");
  });
});

describe("redactEvidence", () => {
  // What every connector's evidence goes through in the runner: nothing to list, nothing to remember.
  const dataSource = { type: "http", url: "http://127.0.0.1:9", headers: { "x-key": { env: "PES_TEST_EVIDENCE_KEY" } } };
  const { secrets } = resolveSecrets(dataSource, { env: { PES_TEST_EVIDENCE_KEY: "key-123456" } });
  const time = new Date("2026-11-20T14:08:00Z");

  it("redacts the data source's secrets from every text of every kind, keeping the link", () => {
    const evidence: Evidence[] = [
      { kind: "failed", action: "Check", reason: "the API said key-123456 is wrong", link: "http://link" },
      { kind: "answer", action: "Check", text: "key-123456" },
      { kind: "values", action: "Check", values: [{ labels: { header: "Bearer key-123456" }, value: 1 }], count: 1 },
      { kind: "change", action: "Check", change: "deploy", subject: "key-123456", detail: "v1 key-123456", at: time },
      { kind: "skipped", action: "Check", missing: ["service"] },
    ];
    const redacted = evidence.map((item) => redactEvidence(item, secrets));
    expect(JSON.stringify(redacted)).not.toContain("key-123456");
    expect(redacted.map((item) => shortAnswer(item, time))).toEqual([
      "Check: the API said [redacted] is wrong",
      "Check: [redacted]",
      "Check 1",
      "Check: deploy of [redacted] to v1 [redacted] at 14:08 UTC",
      "Check: not run, the issue has no attribute service",
    ]);
    expect(redacted[0]?.link).toBe("http://link");
    expect(redacted[2]).toMatchObject({ values: [{ labels: { header: "Bearer [redacted]" } }] });
  });

  it("redacts before the short answer is cut to 300 characters", () => {
    const failed = redactEvidence({ kind: "failed", action: "Check", reason: `${"x".repeat(285)} key-123456` }, secrets);
    expect(shortAnswer(failed, time)).toHaveLength(300);
    expect(shortAnswer(failed, time)).not.toContain("key-1");
  });

  it("gives the evidence back as it is for a data source without secrets", () => {
    const answer: Evidence = { kind: "answer", action: "Check", text: "key-123456" };
    expect(redactEvidence(answer, NO_SECRETS)).toBe(answer);
  });
});
