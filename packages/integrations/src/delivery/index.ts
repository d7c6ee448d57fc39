export type { CallBounds } from "./call-bounds.js";
export { createChannelPacer, type ChannelPacer, type ChannelPacerOptions } from "./channel-pacer.js";
export type { EnrichmentView } from "./enrichment-view.js";
export { runOncePerKey, type AttemptOutcome, type OnceOutcome, type OncePerKeyOptions } from "./once-per-key.js";
