import type { KeyObject } from "node:crypto";
import jwt from "jsonwebtoken";
import { AppError } from "../errors.js";
import { createJwksKeySource } from "./jwks-key-source.js";
import { VerifiedTokenCache, type VerifiedToken } from "./verified-token-cache.js";

export type { VerifiedToken };

/** Only asymmetric algorithms: an HS256 token "signed" with a public key is refused before any key is used. */
const ALGORITHMS = ["RS256", "ES256"] as const satisfies readonly jwt.Algorithm[];
type AllowedAlgorithm = (typeof ALGORITHMS)[number];
const MAX_TOKEN_LENGTH = 8192;
const MAX_KID_LENGTH = 256;
/** How long an answered key set is used, and so how long a verified token is trusted without a fresh look. */
const KEY_SET_MAX_AGE_MS = 10 * 60_000;
/** Refetches unknown kids may cost per minute while the identity provider answers (a burst of 10, then one every 6 s). */
const JWKS_ANSWERS_PER_MINUTE = 10;
/** Seconds a caller is told to wait when the keys cannot be had: the next request tries the identity provider again. */
const RETRY_AFTER_SECONDS = "5";

export interface TokenVerifierOptions {
  /** Without credentials in it (fetch refuses them): those go in `jwksBasicAuth`. */
  jwksUrl: string;
  /** Sent as `Authorization: Basic` with every JWKS fetch, for an endpoint behind Basic authentication. */
  jwksBasicAuth?: { user: string; password: string } | undefined;
  issuer: string;
  audience: string;
  /** The claim naming the organization (AUTH_ORG_CLAIM, default `org_id`). */
  orgClaim: string;
  /** The claim naming the caller's teams inside its organization (AUTH_TEAMS_CLAIM, default `teams`). */
  teamsClaim?: string;
  /** What a token's scopes must grant for its caller to be an admin of its organization (AUTH_ORG_ADMIN_SCOPE, default `pes:org-admin`). */
  orgAdminScope?: string;
  clockToleranceSeconds?: number;
  /** Overall deadline of one JWKS fetch, headers and body (AUTH_JWKS_TIMEOUT_MS, default 3,000). */
  jwksTimeoutMs?: number;
  /** Told what is wrong with the JWKS endpoint when keys cannot be had (for the logs). */
  onJwksProblem?: (problem: string) => void;
  /** Verified tokens kept in memory (default 10,000); 0 disables the cache. */
  cacheMaxEntries?: number;
  /** Epoch ms; for tests. */
  now?: () => number;
}

/** Verifies bearer tokens; answers with their claims, or throws a 401 (503 when the IdP is unreachable). */
export interface TokenVerifier {
  verify(token: string): Promise<VerifiedToken>;
  /** The claim naming the organization, for the message when a token lacks it. */
  readonly orgClaim: string;
  /** The scope that makes a caller an admin of its organization: it sees every team's objects and the audit trail. */
  readonly orgAdminScope: string;
}

/**
 * A verifier for access tokens of one identity provider, per REFERENCE.md "JWT": keys from its JWKS
 * (held 10 minutes; an unknown kid costs one refetch, rate-limited), algorithms pinned, iss/aud/exp
 * required, 30 s clock tolerance. Nothing is fetched until the first token arrives. When the keys cannot
 * be had (identity provider unreachable, slow, broken, or publishing an unusable key) the answer is 503
 * with Retry-After, never 401: the token may be valid and the client must not throw it away.
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const clockTolerance = options.clockToleranceSeconds ?? 30;
  const now = options.now ?? Date.now;
  const keys = createJwksKeySource({
    url: options.jwksUrl,
    ...(options.jwksBasicAuth === undefined
      ? {}
      : { authorization: `Basic ${Buffer.from(`${options.jwksBasicAuth.user}:${options.jwksBasicAuth.password}`).toString("base64")}` }),
    timeoutMs: options.jwksTimeoutMs ?? 3000,
    maxAgeMs: KEY_SET_MAX_AGE_MS,
    answersPerMinute: JWKS_ANSWERS_PER_MINUTE,
    now,
    onProblem: options.onJwksProblem,
  });
  // A verified token is trusted no longer than a key set is held, so a key removed from the JWKS stops
  // being honoured within the same bound either way.
  const cache = new VerifiedTokenCache({
    maxEntries: options.cacheMaxEntries ?? 10_000,
    maxAgeMs: KEY_SET_MAX_AGE_MS,
    clockToleranceSeconds: clockTolerance,
  });

  async function verifyUncached(token: string, nowMs: number): Promise<VerifiedToken> {
    const { alg, kid } = readHeader(token);
    const publicKey = await signingKey(kid, alg);

    let payload: string | jwt.JwtPayload;
    try {
      payload = jwt.verify(token, publicKey, {
        algorithms: [alg],
        issuer: options.issuer,
        audience: options.audience,
        clockTolerance,
        clockTimestamp: Math.floor(nowMs / 1000),
      });
    } catch (error) {
      if (error instanceof jwt.TokenExpiredError) throw unauthenticated("Token has expired");
      if (error instanceof jwt.NotBeforeError) throw unauthenticated("Token is not yet valid");
      throw unauthenticated(`Invalid token: ${safeReason(error)}`);
    }
    if (typeof payload === "string") throw unauthenticated("Invalid token: the payload is not a JSON object");
    // jsonwebtoken only checks exp when present; a token that never expires is not accepted.
    if (typeof payload.exp !== "number") throw unauthenticated("Invalid token: exp claim is required");

    return {
      orgId: stringClaim(payload[options.orgClaim]),
      clientId: stringClaim(payload.client_id) ?? stringClaim(payload.azp),
      expiresAt: payload.exp,
      notBefore: typeof payload.nbf === "number" ? payload.nbf : undefined,
      scopes: [...grants(payload.scope), ...grants(payload.scp), ...grants(payload.roles)],
      subject: stringClaim(payload.sub),
      teams: [...new Set(grants(payload[options.teamsClaim ?? "teams"]))],
    };
  }

  async function signingKey(kid: string, alg: AllowedAlgorithm): Promise<KeyObject> {
    const found = await keys.lookup(kid);
    // Only an identity provider that answered without the kid makes the token bad.
    if (found.status === "absent") throw unauthenticated("Invalid token: unknown signing key");
    if (found.status === "unavailable") {
      throw new AppError("service_unavailable", "Service unavailable: the identity provider's signing keys cannot be obtained; retry shortly", {
        "Retry-After": RETRY_AFTER_SECONDS,
      });
    }
    // A JWK that names its algorithm may only verify that algorithm.
    if (found.alg !== undefined && found.alg !== alg) throw unauthenticated("Invalid token: algorithm does not match the signing key");
    return found.key;
  }

  return {
    orgClaim: options.orgClaim,
    orgAdminScope: options.orgAdminScope ?? "pes:org-admin",
    async verify(token) {
      const nowMs = now();
      const cached = cache.get(token, nowMs);
      if (cached !== undefined) return cached;
      const verified = await verifyUncached(token, nowMs);
      cache.set(token, verified, nowMs);
      return verified;
    },
  };
}

/** The two header fields we act on. jku, x5u and jwk are never read: keys come only from the configured JWKS. */
function readHeader(token: string): { alg: AllowedAlgorithm; kid: string } {
  if (token.length > MAX_TOKEN_LENGTH) throw unauthenticated("Invalid token: too long");
  let decoded: jwt.Jwt | null;
  try {
    decoded = jwt.decode(token, { complete: true });
  } catch {
    decoded = null;
  }
  if (decoded === null) throw unauthenticated("Invalid token: not a JWT");
  const { alg, kid } = decoded.header;
  const allowed = ALGORITHMS.find((candidate) => candidate === alg);
  if (allowed === undefined) throw unauthenticated(`Invalid token: algorithm must be one of ${ALGORITHMS.join(", ")}`);
  if (typeof kid !== "string" || kid === "" || kid.length > MAX_KID_LENGTH) {
    throw unauthenticated("Invalid token: the header needs a kid naming a key of the identity provider");
  }
  return { alg: allowed, kid };
}

/** A claim of grants, as identity providers write them: one space-separated string or a list of strings. */
function grants(claim: unknown): string[] {
  if (typeof claim === "string") return claim.split(" ").filter((grant) => grant !== "");
  if (Array.isArray(claim)) return claim.filter((grant): grant is string => typeof grant === "string" && grant !== "");
  return [];
}

function stringClaim(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** jsonwebtoken's message without the expected values it appends (issuer/audience are not the caller's business). */
function safeReason(error: unknown): string {
  if (!(error instanceof Error)) return "verification failed";
  return error.message.replace(/\. expected: .*$/s, "");
}

function unauthenticated(message: string): AppError {
  return new AppError("unauthenticated", message);
}
