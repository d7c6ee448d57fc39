import type { JsonWebKey } from "node:crypto";
import jwt from "jsonwebtoken";
import type { DevKey } from "./dev-key.js";

/** `iss` of development tokens; the API's AUTH_ISSUER default when AUTH_DEV_ISSUER is on. */
export const DEV_ISSUER = "http://127.0.0.1/dev-issuer";
/** `aud` of development tokens; the API's AUTH_AUDIENCE default when AUTH_DEV_ISSUER is on. */
export const DEV_AUDIENCE = "playbook-execution-service";

/** The public half of the development key as a JWKS document, as the API serves it. */
export function devJwks(key: DevKey): { keys: JsonWebKey[] } {
  const jwk = key.publicKey.export({ format: "jwk" });
  return { keys: [{ ...jwk, kid: key.kid, alg: "RS256", use: "sig" }] };
}

export interface DevTokenOptions {
  /** The organization the token is for (written to `orgClaim`). */
  org: string;
  /** The calling client, written to `client_id` (RFC 9068); must be one of the org's clientIds. */
  clientId?: string;
  issuer?: string;
  audience?: string;
  expiresInSeconds?: number;
  /** Name of the claim carrying the organization; the API reads AUTH_ORG_CLAIM. */
  orgClaim?: string;
  /** `sub`: who the token is for; default the client. */
  subject?: string;
  /** `scope`, space-separated (`pes:org-admin` makes an admin of the organization). */
  scope?: string;
}

/** Signs an RS256 access token with the development key, as an identity provider would. */
export function mintDevToken(key: DevKey, options: DevTokenOptions): string {
  const clientId = options.clientId ?? "quickstart-cli";
  const expiresInSeconds = options.expiresInSeconds ?? 3600;
  if (!Number.isInteger(expiresInSeconds) || expiresInSeconds <= 0) {
    throw new Error(`expiresInSeconds must be a positive integer, got ${expiresInSeconds}`);
  }
  const claims = { [options.orgClaim ?? "org_id"]: options.org, client_id: clientId, ...(options.scope === undefined ? {} : { scope: options.scope }) };
  return jwt.sign(claims, key.privateKey, {
    algorithm: "RS256",
    keyid: key.kid,
    issuer: options.issuer ?? DEV_ISSUER,
    audience: options.audience ?? DEV_AUDIENCE,
    subject: options.subject ?? clientId,
    expiresIn: expiresInSeconds,
  });
}
