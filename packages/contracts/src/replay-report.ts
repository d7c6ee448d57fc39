import { z } from "zod";
import { ActionableMitigation } from "./execution-result.js";
import { Verdict } from "./execution-verdict.js";

/**
 * What replaying an evidence bundle through the analysis gives (`pes replay`, the MCP replay tool): the
 * verdict and mitigations reached again, and whether they are the ones recorded with the bundle.
 */
export const ReplayReport = z
  .object({
    executionId: z.string().optional().meta({ description: "The bundle's execution; absent for a hand-written bundle that names none." }),
    verdict: Verdict,
    actionableMitigations: z.array(ActionableMitigation).meta({
      description: "The mitigations the findings call for, in the playbook's order (a silence form's link apart, which a bundle does not hold).",
    }),
    unreadable: z.array(z.string()).meta({ description: "The titles of the actions whose observation this build cannot read (a later version's kind)." }),
    truncated: z.array(z.string()).meta({ description: "The titles of the actions whose observation was cut to fit the bundle's cap." }),
    sameAsRecorded: z.boolean().optional().meta({
      description: "Whether the verdict is the one recorded with the bundle and the mitigations the ones the execution offered; absent when none was recorded.",
    }),
  })
  .meta({ id: "ReplayReport" });
export type ReplayReport = z.infer<typeof ReplayReport>;
