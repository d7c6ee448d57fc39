import { z } from "zod";

/**
 * A secret is never written in configuration files: they name the environment variable, or the file
 * (a mounted Kubernetes or Docker secret, a TLS key), that holds it. The worker resolves every reference
 * once at start (one it cannot resolve stops it); values are never logged, never returned.
 */
export const SecretRef = z.union([
  z.strictObject({
    env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, "env must name an environment variable (A-Z, 0-9, _)"),
  }),
  z.strictObject({ file: z.string().min(1) }),
]);
export type SecretRef = z.infer<typeof SecretRef>;

/** How messages name where a secret comes from (never its value): `environment variable X`, `file /x`. */
export function describeSecretRef(ref: SecretRef): string {
  return "env" in ref ? `environment variable ${ref.env}` : `file ${ref.file}`;
}

/** The credential of an HTTP basic Authorization header: base64 of `username:password` (RFC 7617). */
export function basicCredential(username: string, password: string): string {
  return Buffer.from(`${username}:${password}`).toString("base64");
}
