import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from "node:crypto";
import { link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The development signing key: what the token CLI signs with and what the API publishes as its JWKS. */
export interface DevKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/** File name of the persisted key inside the key directory. */
export const DEV_KEY_FILE = "dev-issuer-key.json";

/**
 * `DEV_ISSUER_DIR`, else `<repo root>/.dev-issuer` (gitignored). Computed from this file's location
 * (`packages/dev-issuer/{src,dist}/`) so the API and the CLI agree whatever their working directory.
 */
export function defaultDevKeyDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.DEV_ISSUER_DIR;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  return fileURLToPath(new URL("../../../.dev-issuer", import.meta.url));
}

/**
 * Reads the development key from `<dir>/dev-issuer-key.json`, creating it (RS256, 2048-bit, mode 0600)
 * on first use. Creation is atomic and never overwrites: when two processes race, both end up with the
 * key of whichever wrote first.
 */
export async function loadOrCreateDevKey(dir: string = defaultDevKeyDir()): Promise<DevKey> {
  const file = join(dir, DEV_KEY_FILE);
  const existing = await readKeyFile(file);
  if (existing !== undefined) return existing;

  await mkdir(dir, { recursive: true, mode: 0o700 });
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = thumbprint(createPublicKey(privateKey));
  const stored: StoredDevKey = { kid, privateKeyPem: privateKey.export({ format: "pem", type: "pkcs8" }).toString() };

  // Write a private temp file, then hard-link it into place: link() fails when the target exists,
  // so a concurrent creator can never be clobbered and a reader never sees a half-written file.
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(temp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  try {
    await link(temp, file);
  } catch (error) {
    if (!isErrnoException(error) || error.code !== "EEXIST") throw error;
  } finally {
    await unlink(temp);
  }
  const created = await readKeyFile(file);
  if (created === undefined) throw new Error(`Dev issuer key ${file} disappeared while being created`);
  return created;
}

interface StoredDevKey {
  kid: string;
  privateKeyPem: string;
}

async function readKeyFile(file: string): Promise<DevKey | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if (isErrnoException(error) && error.code === "ENOENT") return undefined;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`Dev issuer key ${file} is not valid JSON; delete it to create a new key`);
  }
  if (!isStoredDevKey(parsed)) {
    throw new Error(`Dev issuer key ${file} must hold {"kid": string, "privateKeyPem": string}; delete it to create a new key`);
  }
  const privateKey = createPrivateKey(parsed.privateKeyPem);
  if (privateKey.asymmetricKeyType !== "rsa") {
    throw new Error(`Dev issuer key ${file} must hold an RSA private key`);
  }
  return { kid: parsed.kid, privateKey, publicKey: createPublicKey(privateKey) };
}

function isStoredDevKey(value: unknown): value is StoredDevKey {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.kid === "string" && record.kid !== "" && typeof record.privateKeyPem === "string";
}

/** RFC 7638 JWK thumbprint: a kid derived from the key itself. */
function thumbprint(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: "jwk" });
  const canonical = JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n });
  return createHash("sha256").update(canonical).digest("base64url");
}

function isErrnoException(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && "code" in error;
}
