import { z } from "zod";

/**
 * A secret is never written in configuration files: they name the environment variable that holds it.
 * Resolved by the worker at start (a missing variable stops it), never logged, never returned.
 */
export const SecretRef = z.strictObject({
  env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, "env must name an environment variable (A-Z, 0-9, _)"),
});
export type SecretRef = z.infer<typeof SecretRef>;

/** Reads a secret from the environment; throws naming the variable (never its value) when unset. */
export function readSecret(ref: SecretRef, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[ref.env];
  if (value === undefined || value === "") {
    throw new Error(`environment variable ${ref.env} is not set`);
  }
  return value;
}

/** The credential of an HTTP basic Authorization header: base64 of `username:password` (RFC 7617). */
export function basicCredential(username: string, password: string): string {
  return Buffer.from(`${username}:${password}`).toString("base64");
}
