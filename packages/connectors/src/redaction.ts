import { basicCredential, readSecret, type SecretRef } from "./secret-ref.js";

const REDACTED = "[redacted]";
/** Too short to redact without garbling ordinary text; such a secret is no secret anyway. */
const MIN_SECRET_LENGTH = 4;

/**
 * The secrets of a data source, found in its configuration rather than listed by each connector: every
 * SecretRef anywhere in it (a bearer token, a password, a header), and for each `{ username, password }`
 * pair whose password is a SecretRef, the base64 `username:password` that basic auth sends. A variable
 * that is unset is skipped: the connector reports it (by name) and sends nothing.
 */
export function secretsOf(dataSource: unknown, env: NodeJS.ProcessEnv = process.env): string[] {
  const secrets: string[] = [];
  const read = (value: unknown): string | undefined => {
    if (!isSecretRef(value)) return undefined;
    try {
      return readSecret(value, env);
    } catch {
      return undefined;
    }
  };
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (node === null || typeof node !== "object") return;
    const secret = read(node);
    if (secret !== undefined) {
      secrets.push(secret);
      return;
    }
    if ("username" in node && typeof node.username === "string" && "password" in node) {
      const password = read(node.password);
      if (password !== undefined) secrets.push(basicCredential(node.username, password));
    }
    Object.values(node).forEach(visit);
  };
  visit(dataSource);
  return secrets;
}

/**
 * A SecretRef's shape, checked without zod: the data source passed its schema at load, and this runs on
 * every action (a failed zod parse builds an error object).
 */
function isSecretRef(value: unknown): value is SecretRef {
  return value !== null && typeof value === "object" && "env" in value && typeof value.env === "string" && Object.keys(value).length === 1;
}

/**
 * Replaces each secret in `text` by `[redacted]`, in every form a data source may echo it in: as it is,
 * URL-encoded (`encodeURIComponent`, form encoding, lower-case hex) and escaped inside a JSON string.
 * Longer forms go first, so that a secret holding another is replaced whole.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const form of formsOf(secrets)) {
    if (result.includes(form)) result = result.split(form).join(REDACTED);
  }
  return result;
}

function formsOf(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    const encoded = encodeURIComponent(secret);
    forms.add(secret);
    forms.add(encoded);
    forms.add(encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()));
    forms.add(new URLSearchParams({ s: secret }).toString().slice("s=".length));
    forms.add(JSON.stringify(secret).slice(1, -1));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}
