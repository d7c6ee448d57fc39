import { execFile } from "node:child_process";
import { createPublicKey, type JsonWebKey } from "node:crypto";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import jwt from "jsonwebtoken";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEV_AUDIENCE, DEV_ISSUER, DEV_KEY_FILE, defaultDevKeyDir, devJwks, loadOrCreateDevKey, mintDevToken } from "./index.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "dev-issuer-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function verifyWithJwks(token: string, jwks: { keys: JsonWebKey[] }): jwt.JwtPayload {
  const jwk = jwks.keys[0];
  if (jwk === undefined) throw new Error("empty JWKS");
  const payload = jwt.verify(token, createPublicKey({ key: jwk, format: "jwk" }), {
    algorithms: ["RS256"],
    issuer: DEV_ISSUER,
    audience: DEV_AUDIENCE,
  });
  if (typeof payload === "string") throw new Error("string payload");
  return payload;
}

describe("loadOrCreateDevKey", () => {
  it("creates the key file once with mode 0600 and reuses it", async () => {
    const first = await loadOrCreateDevKey(dir);
    const file = join(dir, DEV_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const before = await readFile(file, "utf8");

    const second = await loadOrCreateDevKey(dir);
    expect(second.kid).toBe(first.kid);
    expect(await readFile(file, "utf8")).toBe(before);
    expect(second.publicKey.export({ format: "jwk" })).toEqual(first.publicKey.export({ format: "jwk" }));
  });

  it("gives concurrent callers the same key", async () => {
    const keys = await Promise.all([loadOrCreateDevKey(dir), loadOrCreateDevKey(dir), loadOrCreateDevKey(dir)]);
    expect(new Set(keys.map((key) => key.kid)).size).toBe(1);
  });

  it("creates a missing directory", async () => {
    const nested = join(dir, "a", "b");
    await loadOrCreateDevKey(nested);
    expect((await stat(join(nested, DEV_KEY_FILE))).isFile()).toBe(true);
  });

  it("names the file when it is corrupt", async () => {
    await writeFile(join(dir, DEV_KEY_FILE), "{not json");
    await expect(loadOrCreateDevKey(dir)).rejects.toThrow(join(dir, DEV_KEY_FILE));
  });

  it("defaults to DEV_ISSUER_DIR, else <repo>/.dev-issuer", () => {
    expect(defaultDevKeyDir({ DEV_ISSUER_DIR: "/somewhere" })).toBe("/somewhere");
    const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
    expect(defaultDevKeyDir({})).toBe(join(repoRoot, ".dev-issuer"));
  });
});

describe("mintDevToken", () => {
  it("mints an RS256 token that verifies against the published JWK", async () => {
    const key = await loadOrCreateDevKey(dir);
    const jwks = devJwks(key);
    expect(jwks.keys[0]).toMatchObject({ kty: "RSA", kid: key.kid, alg: "RS256", use: "sig" });
    expect(jwks.keys[0]).not.toHaveProperty("d");

    const token = mintDevToken(key, { org: "acme" });
    const header = jwt.decode(token, { complete: true })?.header;
    expect(header).toMatchObject({ alg: "RS256", kid: key.kid });
    const payload = verifyWithJwks(token, jwks);
    expect(payload).toMatchObject({ org_id: "acme", client_id: "quickstart-cli", iss: DEV_ISSUER, aud: DEV_AUDIENCE });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(3600);
  });

  it("honours the client, claim name and lifetime options", async () => {
    const key = await loadOrCreateDevKey(dir);
    const token = mintDevToken(key, { org: "acme", clientId: "ci", orgClaim: "tenant", expiresInSeconds: 60 });
    const payload = verifyWithJwks(token, devJwks(key));
    expect(payload).toMatchObject({ tenant: "acme", client_id: "ci" });
    expect(payload).not.toHaveProperty("org_id");
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(60);
  });

  it("does not verify against another key", async () => {
    const key = await loadOrCreateDevKey(dir);
    const other = await loadOrCreateDevKey(join(dir, "other"));
    expect(() => verifyWithJwks(mintDevToken(key, { org: "acme" }), devJwks(other))).toThrow("invalid signature");
  });

  it("rejects a non-positive lifetime", async () => {
    const key = await loadOrCreateDevKey(dir);
    expect(() => mintDevToken(key, { org: "acme", expiresInSeconds: 0 })).toThrow("expiresInSeconds");
  });
});

describe("token CLI", () => {
  const cli = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
  const run = promisify(execFile);

  it("prints only a token that verifies against the key in DEV_ISSUER_DIR", async () => {
    const { stdout } = await run(process.execPath, [cli, "--org", "acme", "--client", "ci", "--ttl", "120"], {
      env: { ...process.env, DEV_ISSUER_DIR: dir },
    });
    const token = stdout.trim();
    expect(stdout).toBe(`${token}\n`);
    const payload = verifyWithJwks(token, devJwks(await loadOrCreateDevKey(dir)));
    expect(payload).toMatchObject({ org_id: "acme", client_id: "ci" });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(120);
  });

  it("exits 2 with usage when --org is missing", async () => {
    const failure = run(process.execPath, [cli], { env: { ...process.env, DEV_ISSUER_DIR: dir } });
    await expect(failure).rejects.toMatchObject({ code: 2, stdout: "", stderr: expect.stringContaining("--org is required") });
  });
});
