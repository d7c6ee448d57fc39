/**
 * A per-channel posting limit as chat services apply one: a token bucket per channel holding `burst`
 * posts, refilled by one every `refillMs`; a post finding it empty is refused (429) with
 * `retryAfterSeconds`.
 */
export interface ChannelRateLimit {
  burst: number;
  refillMs: number;
  retryAfterSeconds: number;
}

/** Takes a token from the channel's bucket: false when it is empty and the post is to be refused. Always true without a limit. */
export function channelBuckets(limit: ChannelRateLimit | undefined): (channel: string) => boolean {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return (channel) => {
    if (limit === undefined) return true;
    const now = performance.now();
    const bucket = buckets.get(channel) ?? { tokens: limit.burst, at: now };
    bucket.tokens = Math.min(limit.burst, bucket.tokens + (now - bucket.at) / limit.refillMs);
    bucket.at = now;
    buckets.set(channel, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  };
}
