import { isDeepStrictEqual } from "node:util";
import type { EvidenceBundle, ReplayReport } from "@pes/contracts";
import { replayBundle } from "./replay.js";

/**
 * Replays a bundle offline and compares its verdict and mitigations with those recorded with it: what
 * `pes replay` prints and the MCP replay tool answers.
 */
export function replayReport(bundle: EvidenceBundle): ReplayReport {
  const replay = replayBundle(bundle);
  const offered = bundle.mitigations.filter(({ offered }) => offered).map(({ mitigation }) => mitigation);
  const same = isDeepStrictEqual(replay.verdict, bundle.verdict) && isDeepStrictEqual(replay.actionableMitigations, offered);
  return {
    ...(bundle.executionId === undefined ? {} : { executionId: bundle.executionId }),
    ...replay,
    ...(bundle.verdict === undefined ? {} : { sameAsRecorded: same }),
  };
}
