import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_SECRETS, resolveSecrets } from "./data-source-secrets.js";

describe("resolveSecrets", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "pes-secrets-"));
    await writeFile(join(dir, "token"), "file-token-123\n");
    await writeFile(join(dir, "empty"), "\n");
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("resolves environment variables and files once, by shape, wherever they are", () => {
    const dataSource = {
      type: "http",
      url: "http://h",
      headers: { "x-env": { env: "PES_KEY" }, "x-file": { file: join(dir, "token") }, "x-plain": "sre" },
      nested: [{ deeper: { env: "PES_KEY" } }],
    };
    const { secrets, missing } = resolveSecrets(dataSource, { env: { PES_KEY: "env-key-123" } });
    expect(missing).toEqual([]);
    expect(secrets.value({ env: "PES_KEY" })).toBe("env-key-123");
    // One trailing newline dropped: `echo token > file` writes one.
    expect(secrets.value({ file: join(dir, "token") })).toBe("file-token-123");
    expect(secrets.redacted).toEqual(["env-key-123", "file-token-123", "env-key-123"]);
  });

  it("lists what it cannot resolve, with where it is and why, never a value", () => {
    const dataSource = {
      type: "prometheus",
      url: "http://p",
      auth: { basic: { username: "reader", password: { env: "PES_UNSET" } } },
      tls: { ca: { file: join(dir, "absent.pem") }, cert: { file: join(dir, "empty") }, key: { env: "PES_EMPTY" } },
    };
    const { secrets, missing } = resolveSecrets(dataSource, { env: { PES_EMPTY: "" } });
    expect(missing.map(({ path, problem }) => `${path.join(".")} ${problem}`)).toEqual([
      "auth.basic.password is not set",
      "tls.ca cannot be read (ENOENT)",
      "tls.cert is empty",
      "tls.key is not set",
    ]);
    expect(secrets.redacted).toEqual([]);
    expect(() => secrets.value({ env: "PES_UNSET" })).toThrow("environment variable PES_UNSET is not set");
    expect(() => NO_SECRETS.value({ file: "/run/secrets/x" })).toThrow("file /run/secrets/x is not set");
  });

  it("reads each variable from the environment it is given, not from process.env", () => {
    const { missing } = resolveSecrets({ type: "http", url: "http://h", headers: { a: { env: "PATH" } } }, { env: {} });
    expect(missing.map(({ ref }) => ref)).toEqual([{ env: "PATH" }]);
  });
});
