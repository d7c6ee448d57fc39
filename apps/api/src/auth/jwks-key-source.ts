import { createPublicKey, type JsonWebKey, type KeyObject } from "node:crypto";
import { errorMessage } from "@pes/contracts";

/**
 * Largest JWKS answer read. Real ones are a few KiB (Entra ID's, with certificate chains, about 20 KiB);
 * anything larger means the identity provider misbehaves, and is not worth our memory.
 */
export const MAX_JWKS_BYTES = 256 * 1024;
/** Most keys one JWKS may hold: each is imported when the set is fetched. */
export const MAX_JWKS_KEYS = 100;
/** RSA keys shorter than this are not honoured (forgeable; jsonwebtoken 9 refuses to sign with them too). */
const MIN_RSA_MODULUS_BITS = 2048;

export interface JwksKeySourceOptions {
  url: string;
  /** The `Authorization` header of every fetch (Basic credentials of an endpoint that wants them); a secret. */
  authorization?: string;
  /** Overall deadline of one fetch, headers and body together. */
  timeoutMs: number;
  /** How long an answered key set is used before it is fetched again. */
  maxAgeMs: number;
  /**
   * Answers per minute the identity provider may be asked for on behalf of a kid the held key set lacks
   * (or holds unusable). Only answers count: failed fetches spend nothing, so the first request after an
   * outage always asks again.
   */
  answersPerMinute: number;
  /** Epoch ms. */
  now: () => number;
  /**
   * Told what is wrong with the endpoint, for the logs (never sent to a caller): why a fetch failed (once
   * per run of identical failures, so an outage is not a flood), and each unusable key an answer holds.
   */
  onProblem?: (problem: string) => void;
}

/** What the identity provider's key set says about one kid. */
export type KeyLookup =
  | { status: "found"; key: KeyObject; alg: string | undefined }
  /** The identity provider answered without a key of that kid. */
  | { status: "absent" }
  /** The identity provider cannot be reached, misbehaves, or publishes an unusable key under the kid: ask again later. */
  | { status: "unavailable"; reason: string };

/** The identity provider's signing keys, looked up by kid. */
export interface JwksKeySource {
  lookup(kid: string): Promise<KeyLookup>;
}

type KeyEntry = { key: KeyObject; alg: string | undefined } | { unusable: string };

interface KeySet {
  fetchedAt: number;
  keys: ReadonlyMap<string, KeyEntry>;
}

type FetchOutcome = KeySet | { failure: string };

/**
 * The signing keys of one JWKS endpoint. Nothing is fetched until the first lookup; the answered set is
 * held for `maxAgeMs`; concurrent lookups share one fetch; each fetch has an overall deadline and a size
 * cap. A kid missing from a fresh set (or unusable in it) costs a refetch while the answer budget lasts,
 * so a rotated-in key is found at once, but a spray of made-up kids cannot make us hammer the identity
 * provider. A set that has expired is refetched whatever the budget; during an outage every lookup that
 * needs the endpoint tries it once (one fetch at a time), so recovery is immediate.
 */
export function createJwksKeySource(options: JwksKeySourceOptions): JwksKeySource {
  const budget = new AnswerBudget(options.answersPerMinute, options.now());
  let keySet: KeySet | undefined;
  let inFlight: Promise<FetchOutcome> | undefined;
  let lastFailure: string | undefined;

  function refetch(): Promise<FetchOutcome> {
    inFlight ??= fetchKeySet(options.url, options.authorization, options.timeoutMs)
      .then(
        (keys): FetchOutcome => {
          const now = options.now();
          budget.spend(now);
          keySet = { fetchedAt: now, keys };
          lastFailure = undefined;
          for (const [kid, entry] of keys) {
            if ("unusable" in entry) options.onProblem?.(`publishes under kid "${kid}" ${entry.unusable}`);
          }
          return keySet;
        },
        (error: unknown): FetchOutcome => {
          const failure = describeFailure(error, options.timeoutMs);
          if (failure !== lastFailure) options.onProblem?.(failure);
          lastFailure = failure;
          return { failure };
        },
      )
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  }

  return {
    async lookup(kid) {
      const now = options.now();
      const fresh = keySet !== undefined && now - keySet.fetchedAt < options.maxAgeMs ? keySet : undefined;
      if (fresh !== undefined) {
        const entry = fresh.keys.get(kid);
        if (entry !== undefined && "key" in entry) return { status: "found", ...entry };
        if (inFlight === undefined && !budget.canSpend(now)) return entryLookup(entry);
      }
      const outcome = await refetch();
      if ("failure" in outcome) return { status: "unavailable", reason: outcome.failure };
      return entryLookup(outcome.keys.get(kid));
    },
  };
}

function entryLookup(entry: KeyEntry | undefined): KeyLookup {
  if (entry === undefined) return { status: "absent" };
  if ("unusable" in entry) return { status: "unavailable", reason: entry.unusable };
  return { status: "found", ...entry };
}

/** A token bucket of answers per minute, full at start. */
class AnswerBudget {
  #tokens: number;
  #at: number;

  constructor(
    private readonly perMinute: number,
    now: number,
  ) {
    this.#tokens = perMinute;
    this.#at = now;
  }

  canSpend(now: number): boolean {
    this.#refill(now);
    return this.#tokens >= 1;
  }

  spend(now: number): void {
    this.#refill(now);
    this.#tokens = Math.max(0, this.#tokens - 1);
  }

  #refill(now: number): void {
    const elapsed = Math.max(0, now - this.#at);
    this.#tokens = Math.min(this.perMinute, this.#tokens + (elapsed * this.perMinute) / 60_000);
    this.#at = now;
  }
}

class JwksFetchError extends Error {
  override name = "JwksFetchError";
}

/** GET the JWKS under one deadline for headers and body alike; the keys by kid. */
async function fetchKeySet(url: string, authorization: string | undefined, timeoutMs: number): Promise<ReadonlyMap<string, KeyEntry>> {
  const response = await fetch(url, {
    signal: AbortSignal.timeout(timeoutMs),
    // A JWKS that moves is a misconfiguration to fix, not a hop to follow.
    redirect: "manual",
    headers: { Accept: "application/jwk-set+json, application/json", ...(authorization === undefined ? {} : { Authorization: authorization }) },
  });
  if (response.status !== 200) {
    void response.body?.cancel().catch(() => {});
    throw new JwksFetchError(`answered HTTP ${response.status}`);
  }
  const text = await readCapped(response, MAX_JWKS_BYTES);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new JwksFetchError("answered something that is not JSON");
  }
  return parseKeySet(document);
}

async function readCapped(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get("content-length"));
  if (declared > maxBytes) {
    void response.body?.cancel().catch(() => {});
    throw new JwksFetchError(`answered ${declared} bytes, over the ${maxBytes}-byte cap`);
  }
  if (response.body === null) return "";
  const chunks: Uint8Array[] = [];
  let total = 0;
  // Leaving the loop early cancels the stream; the fetch's deadline signal errors it if it stalls.
  for await (const chunk of response.body) {
    total += chunk.byteLength;
    if (total > maxBytes) throw new JwksFetchError(`answered over the ${maxBytes}-byte cap`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The RSA and EC signing keys of a JWK Set by kid; an unusable key is kept as such, so it is not mistaken for an absent one. */
function parseKeySet(document: unknown): ReadonlyMap<string, KeyEntry> {
  if (!isObject(document) || !Array.isArray(document.keys)) throw new JwksFetchError("answered JSON that is not a JWK Set");
  if (document.keys.length === 0) throw new JwksFetchError("answered a JWK Set without keys");
  if (document.keys.length > MAX_JWKS_KEYS) throw new JwksFetchError(`answered ${document.keys.length} keys, over the cap of ${MAX_JWKS_KEYS}`);
  const keys = new Map<string, KeyEntry>();
  for (const jwk of document.keys) {
    // Keys we could never verify a token with (encryption keys, symmetric or EdDSA keys, no kid) are not ours to judge.
    if (!isObject(jwk) || typeof jwk.kid !== "string" || jwk.kid === "") continue;
    if (jwk.use !== undefined && jwk.use !== "sig") continue;
    if (jwk.kty !== "RSA" && jwk.kty !== "EC") continue;
    const existing = keys.get(jwk.kid);
    if (existing !== undefined && "key" in existing) continue;
    keys.set(jwk.kid, importKey(jwk));
  }
  return keys;
}

function importKey(jwk: JsonWebKey): KeyEntry {
  if (jwk.alg !== undefined && typeof jwk.alg !== "string") return { unusable: "a key whose alg is not a string" };
  // A published private key means the identity provider is compromised or misconfigured: no token signed with it is trusted.
  if (jwk.d !== undefined) return { unusable: "a private key" };
  let key: KeyObject;
  try {
    key = createPublicKey({ key: jwk, format: "jwk" });
  } catch (error) {
    return { unusable: `a key that cannot be imported (${errorMessage(error)})` };
  }
  // Node imports a garbled modulus as a zero-bit key rather than failing: the length check catches it too.
  if (key.asymmetricKeyType === "rsa" && (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_MODULUS_BITS) {
    return { unusable: `an RSA key shorter than ${MIN_RSA_MODULUS_BITS} bits` };
  }
  return { key, alg: jwk.alg };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof JwksFetchError) return error.message;
  if (error instanceof Error && error.name === "TimeoutError") return `no complete answer within ${timeoutMs} ms`;
  if (!(error instanceof Error)) return String(error);
  // fetch() says "fetch failed"; the cause says why (ECONNREFUSED, other side closed...).
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}
