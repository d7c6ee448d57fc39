/** What the API keeps of a token it has verified: the claims it acts on and the validity window. */
export interface VerifiedToken {
  /** The organization claim (AUTH_ORG_CLAIM); an operator's token for the admin dashboard may have none. */
  orgId: string | undefined;
  /** `client_id` (RFC 9068), else `azp`; undefined when the token names no client. */
  clientId: string | undefined;
  /** `exp` in epoch seconds (always present: tokens without it are rejected). */
  expiresAt: number;
  /** `nbf` in epoch seconds, when present. */
  notBefore: number | undefined;
  /** What `scope` (space-separated, RFC 9068), `scp` and `roles` grant, together. */
  scopes: readonly string[];
  /** `sub`: who asked (a user or a service account), for the audit trail; undefined when absent. */
  subject: string | undefined;
  /** The teams claim (AUTH_TEAMS_CLAIM): a string, space-separated, or an array of strings; empty when absent. */
  teams: readonly string[];
}

interface Entry {
  token: VerifiedToken;
  /** Epoch ms after which the entry is dropped even if the token is still valid (key rotation, revocation). */
  staleAt: number;
}

/**
 * A bounded map of already verified tokens keyed by the exact token string, so that a caller sending
 * the same token thousands of times is checked with one map lookup instead of a signature verification.
 * Validity (exp/nbf with the clock tolerance) is re-checked on every hit. When full, the oldest entry
 * goes first: insertion order is good enough for a working set of hot callers.
 */
export class VerifiedTokenCache {
  readonly #entries = new Map<string, Entry>();

  constructor(private readonly options: { maxEntries: number; maxAgeMs: number; clockToleranceSeconds: number }) {}

  /** The cached claims of `token` if it is cached and valid at `nowMs`. */
  get(token: string, nowMs: number): VerifiedToken | undefined {
    const entry = this.#entries.get(token);
    if (entry === undefined) return undefined;
    if (nowMs >= entry.staleAt || !isValidAt(entry.token, nowMs, this.options.clockToleranceSeconds)) {
      this.#entries.delete(token);
      return undefined;
    }
    return entry.token;
  }

  set(token: string, verified: VerifiedToken, nowMs: number): void {
    if (this.options.maxEntries <= 0) return;
    this.#entries.delete(token);
    while (this.#entries.size >= this.options.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#entries.delete(oldest.value);
    }
    this.#entries.set(token, { token: verified, staleAt: nowMs + this.options.maxAgeMs });
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** exp and nbf as jsonwebtoken checks them, with the same tolerance. */
export function isValidAt(token: VerifiedToken, nowMs: number, clockToleranceSeconds: number): boolean {
  const now = Math.floor(nowMs / 1000);
  if (now >= token.expiresAt + clockToleranceSeconds) return false;
  if (token.notBefore !== undefined && token.notBefore > now + clockToleranceSeconds) return false;
  return true;
}
