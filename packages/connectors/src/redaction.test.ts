import { describe, expect, it } from "vitest";
import { resolveSecrets } from "./data-source-secrets.js";
import { redactSecrets } from "./redaction.js";

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
    const dataSource = {
      type: "http",
      url: "http://h",
      headers: { "x-team": "sre", "x-api-key": { env: "PES_KEY" }, "x-other": { env: "PES_UNSET" } },
    } as const;
    expect(secretsOf(dataSource, env)).toEqual(["key-123456"]);
  });

  it("finds nothing in a data source without secrets", () => {
    expect(secretsOf({ type: "prometheus", url: "http://p" }, env)).toEqual([]);
  });
});

describe("redactSecrets", () => {
  const secret = 'pa:ss w/rd+"x"';

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
