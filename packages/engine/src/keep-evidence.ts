import { createHash } from "node:crypto";
import { fitBundle } from "@pes/analysis";
import { canonicalJson, type EvidenceBundle, type ExecutionJob } from "@pes/contracts";
import type { Logger } from "@pes/logger";
import { bundleOf } from "./evidence-bundle.js";
import { findingsOf, type Judged } from "./judge.js";
import type { Plan } from "./plan.js";
import type { WindowedRun } from "./run.js";

/** An execution's evidence bundle, to be kept for the organization's retention. */
export interface KeptEvidence {
  orgId: string;
  retentionDays: number;
  /** The organization's cap on a bundle's JSON: the bundle was cut to fit it (fitBundle). */
  maxBytes: number;
  bundle: EvidenceBundle;
}

/** One execution's evidence, judged, and where its organization keeps it. */
export interface EvidenceToKeep {
  executionId: string;
  job: ExecutionJob;
  plan: Plan;
  runs: readonly WindowedRun[];
  judged: Judged;
  settings: { retentionDays: number; maxBytes: number };
  recordedAt: Date;
}

/**
 * Keeps the evidence bundle of a judged execution: per action what it observed over the window it ran,
 * with its evidence, and the mitigations as rendered with whether they were offered; within the
 * organization's cap, observations cut (and marked) where the verdict allows it. A failure to keep it is
 * logged: the result stands. Returns the sha256 (hex) of the kept bundle's canonical JSON; undefined when
 * it was not kept.
 */
export async function keepExecutionEvidence(input: EvidenceToKeep, keep: (kept: KeptEvidence) => Promise<void>, logger: Logger): Promise<string | undefined> {
  const { executionId, job, plan, runs, judged } = input;
  const perAction = runs.map((run) => run.evidence);
  const actions = plan.actions.map((action, index) => ({
    gadget: action.gadgetTitle,
    title: action.title,
    connector: action.connector,
    ...(action.instance.upstream === undefined ? {} : { upstream: action.instance.upstream }),
    window: runs[index]?.window ?? plan.window,
    evidence: perAction[index] ?? [],
    ...(runs[index]?.observed === undefined ? {} : { observed: runs[index].observed }),
  }));
  const offered = new Set(judged.offered);
  const mitigations = judged.mitigations.map((rendered) => ({ ...rendered, offered: offered.has(rendered.mitigation) }));
  const { retentionDays, maxBytes } = input.settings;
  // The findings as judged, per action: only the observations that are cut are read again.
  const findings = plan.actions.map((action) => findingsOf(plan.actions, perAction, (other) => other === action));
  const bundle = fitBundle(bundleOf(executionId, job, plan.upstreams, actions, mitigations, judged.judgement.verdict, input.recordedAt), maxBytes, {
    findings,
  });
  try {
    await keep({ orgId: job.orgId, retentionDays, maxBytes, bundle });
  } catch (error) {
    logger.warn({ err: error, requestId: job.requestId }, "could not keep the execution's evidence bundle");
    return undefined;
  }
  // What the audit record names it by: the same whatever order its keys come in when read back.
  return createHash("sha256").update(canonicalJson(bundle)).digest("hex");
}
