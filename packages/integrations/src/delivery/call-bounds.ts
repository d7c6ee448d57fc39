/** When a call to a chat or an incident tool may still run, and what stops it early. */
export interface CallBounds {
  /** Epoch ms: no wait (rate limit, pacing) goes past it. */
  deadline: number;
  signal?: AbortSignal;
}
