import { bundleProblems, replayReport } from "@pes/analysis";
import { EvidenceBundle, ReplayReport } from "@pes/contracts";
import { z } from "zod";
import { ToolError } from "../pes-service.js";
import { defineTool } from "./pes-tool.js";

export const replayEvidenceBundle = defineTool({
  name: "replay_evidence_bundle",
  title: "Replay an evidence bundle",
  description:
    "Run the analysis again, offline, over an evidence bundle: the kept one of an execution (`executionId`) or one you " +
    'pass whole (`bundle`, e.g. a get_evidence_bundle answer you edited to ask "what if this metric had been normal?"). ' +
    "Queries no data source and runs nothing on the queue. Returns the verdict and mitigations the analysis reaches now, " +
    "and `sameAsRecorded`: whether they are the ones the execution reached. Give exactly one of `executionId` and `bundle`.",
  input: z.strictObject({
    executionId: z.string().optional().meta({ description: "An execution whose kept evidence bundle to replay." }),
    bundle: EvidenceBundle.optional().meta({ description: "A bundle to replay as given." }),
  }),
  output: ReplayReport,
  readOnly: true,
  run: async (service, { executionId, bundle }) => {
    if ((executionId === undefined) === (bundle === undefined)) throw new ToolError("Give exactly one of executionId and bundle");
    const replayed = bundle ?? (await service.readEvidence(executionId ?? ""));
    // As `pes replay` without --lenient: a bundle the analysis cannot read whole is refused, each problem named.
    const problems = bundleProblems(replayed);
    if (problems.length > 0) throw new ToolError(`The analysis cannot read the bundle: ${problems.join("; ")}`);
    return replayReport(replayed);
  },
});
