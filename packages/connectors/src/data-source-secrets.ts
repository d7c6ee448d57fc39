import { readFileSync } from "node:fs";
import { basicCredential, describeSecretRef, type SecretRef } from "./secret-ref.js";

/** A data source's secrets, resolved once at start and handed to its connector with every action. */
export interface DataSourceSecrets {
  /**
   * The value a reference resolved to.
   * @throws Error naming where the secret comes from (never a value) when it was not resolved.
   */
  value(ref: SecretRef): string;
  /** What an answer must never show: each value, and each basic-auth credential built from one. */
  readonly redacted: readonly string[];
}

/** A secret reference that could not be resolved: where it is in the data source, and why. */
export interface UnresolvedSecret {
  path: string[];
  ref: SecretRef;
  problem: string;
}

/** Where secrets come from: the environment, and files (read once, here). */
export interface SecretSources {
  env: Readonly<Record<string, string | undefined>>;
  readFile?: (path: string) => string;
}

/** A data source without secrets, or one whose secrets were not resolved: every reference fails by name. */
export const NO_SECRETS: DataSourceSecrets = secretsFrom(new Map(), []);

/**
 * Resolves every secret reference of a data source, found by shape (`{ env }` or `{ file }` anywhere in
 * it), so a new connector needs nothing here. An environment variable that is unset or empty, or a file
 * that cannot be read or is empty, is listed in `missing`; the worker refuses to start on any. A file's
 * one trailing newline is dropped (`echo token > file` writes one).
 */
export function resolveSecrets(dataSource: unknown, sources: SecretSources): { secrets: DataSourceSecrets; missing: UnresolvedSecret[] } {
  const readFile = sources.readFile ?? ((path: string) => readFileSync(path, "utf8"));
  const values = new Map<string, string>();
  const redacted: string[] = [];
  const missing: UnresolvedSecret[] = [];
  // Reports a reference it cannot resolve when given its path: once per place it is written.
  const resolve = (ref: SecretRef, path?: string[]): string | undefined => {
    const key = keyOf(ref);
    const known = values.get(key);
    if (known !== undefined) return known;
    const read = readRef(ref, sources.env, readFile);
    if (typeof read !== "string") {
      if (path !== undefined) missing.push({ path, ref, problem: read.problem });
      return undefined;
    }
    values.set(key, read);
    return read;
  };
  const visit = (node: unknown, path: string[]): void => {
    if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) visit(item, [...path, String(index)]);
      return;
    }
    if (node === null || typeof node !== "object") return;
    if (isSecretRef(node)) {
      const value = resolve(node, path);
      if (value !== undefined) redacted.push(value);
      return;
    }
    if ("username" in node && typeof node.username === "string" && "password" in node && isSecretRef(node.password)) {
      // The password itself is reported (if need be) where the walk meets it, just below.
      const password = resolve(node.password);
      if (password !== undefined) redacted.push(basicCredential(node.username, password));
    }
    for (const [key, value] of Object.entries(node)) visit(value, [...path, key]);
  };
  visit(dataSource, []);
  return { secrets: secretsFrom(values, redacted), missing };
}

function secretsFrom(values: ReadonlyMap<string, string>, redacted: readonly string[]): DataSourceSecrets {
  return {
    value(ref) {
      const value = values.get(keyOf(ref));
      if (value === undefined) throw new Error(`${describeSecretRef(ref)} is not set`);
      return value;
    },
    redacted,
  };
}

function readRef(ref: SecretRef, env: SecretSources["env"], readFile: (path: string) => string): string | { problem: string } {
  if ("env" in ref) {
    const value = env[ref.env];
    return value === undefined || value === "" ? { problem: "is not set" } : value;
  }
  let text: string;
  try {
    text = readFile(ref.file);
  } catch (error) {
    const code = error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : "unreadable";
    return { problem: `cannot be read (${code})` };
  }
  const value = text.replace(/\r?\n$/, "");
  return value === "" ? { problem: "is empty" } : value;
}

function keyOf(ref: SecretRef): string {
  return "env" in ref ? `env:${ref.env}` : `file:${ref.file}`;
}

/** A SecretRef's shape, checked without zod: the data source passed its schema at load. */
function isSecretRef(value: unknown): value is SecretRef {
  if (value === null || typeof value !== "object" || Object.keys(value).length !== 1) return false;
  return ("env" in value && typeof value.env === "string") || ("file" in value && typeof value.file === "string");
}
