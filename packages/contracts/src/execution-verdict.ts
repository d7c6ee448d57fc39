import { z } from "zod";
import { StoppingBudget } from "./execution-budget.js";

/**
 * The kinds of cause and symptom the analysis tells apart: changes (`deploy`, `config`, `restart`);
 * metrics (`saturation`: at its limit or threshold; `outage`: fallen to zero from a level, such as a
 * failing probe; `flat`: stopped moving; `rise`, `drop`: moved against its baseline); `log-pattern`;
 * Kubernetes warning events (`oom`, `crash-loop`, `eviction`, `node-not-ready`, `unschedulable`, else
 * `warning-event`); `alert`; faults a cluster's state shows, as `family/mechanism` (`unschedulable/taint`,
 * `image-pull/not-found`, `quota/pods`, `service/no-endpoints`: docs/verdict.md lists them); as a cause only, `upstream` (a service the paged one calls turned
 * abnormal first; its subject is that service) and `node` (the symptoms are confined to one node's
 * pods, and the node itself fires or warns).
 */
export const VERDICT_KINDS = [
  "deploy",
  "config",
  "restart",
  "saturation",
  "outage",
  "flat",
  "rise",
  "drop",
  "log-pattern",
  "oom",
  "crash-loop",
  "eviction",
  "node-not-ready",
  "unschedulable",
  "warning-event",
  "alert",
  "upstream",
  "node",
] as const;
export type KnownVerdictKind = (typeof VERDICT_KINDS)[number];

/**
 * A cause or symptom, as data: what kind, what it is about, the action that showed it and when it began.
 * `kind` also takes values outside VERDICT_KINDS: a later version may tell more kinds apart, and a client
 * one version behind must still read its results.
 */
export const VerdictFinding = z
  .object({
    kind: z.union([z.enum(VERDICT_KINDS), z.string()]),
    subject: z.string().optional().meta({
      description:
        "What it is about, as the evidence names it: the deployment of a change, the pod or node of an event, a metric series' labels (`db=orders-db`), what an alert fires for. Absent when the evidence names nothing but its action.",
    }),
    detail: z.string().optional().meta({
      description: "The version a change went to, an event's reason, an alert's name, a log pattern, the limit a saturated metric reached.",
    }),
    action: z.string().meta({ description: "The title of the action that showed it, as in actionResults." }),
    onset: z.iso.datetime().optional().meta({ description: "When it began (a change: when it happened); absent when the data does not date it." }),
  })
  .meta({ id: "VerdictFinding" });
export type VerdictFinding = z.infer<typeof VerdictFinding>;

/**
 * The likely cause. `high`: a change followed within minutes by dated symptoms, or a cause's kind that
 * began before every other symptom; `medium`: a change compared with the issue time only (no symptom is
 * dated), a cause's kind that began as other symptoms began, an alert that fired before anything else;
 * `low`: another candidate is as likely (conclusion `ambiguous`).
 */
export const VerdictCause = VerdictFinding.extend({
  confidence: z.enum(["high", "medium", "low"]),
  remedy: z.string().optional().meta({
    description:
      'What would undo a fault the cluster\'s state shows, naming its object ("Create the ServiceAccount adservice in boutique"); absent for other causes.',
  }),
}).meta({ id: "VerdictCause" });
export type VerdictCause = z.infer<typeof VerdictCause>;

/**
 * A change that is not the likely cause, and why: it came before the likely cause (a later change is
 * it), after the first symptom, too long before it (followed by nothing abnormal for longer than a
 * change takes effect), or nothing abnormal was found at all.
 */
export const RuledOutChange = VerdictFinding.extend({
  why: z.enum(["before-likely-cause", "after-first-symptom", "long-before", "no-symptom"]),
  leadMs: z.number().optional().meta({
    description: "From the change to the first symptom (negative: after it); absent when nothing abnormal was found.",
  }),
}).meta({ id: "RuledOutChange" });
export type RuledOutChange = z.infer<typeof RuledOutChange>;

/** An action that found nothing abnormal: its metric or log rate within its usual range, or nothing of what it looked for. */
export const NormalAction = z
  .object({
    action: z.string(),
    found: z.enum(["within-usual-range", "none"]),
  })
  .meta({ id: "NormalAction" });
export type NormalAction = z.infer<typeof NormalAction>;

/**
 * An action that could not check anything: it failed (`error`, in plain words; `budget` when a budget
 * stopped it before it started or cut its wait, see execution-budget.ts), was not run (`missing`
 * attributes), or found no data (`noData`: why; `too-few`: a new log pattern with too few lines to judge).
 */
export const UncheckedAction = z
  .discriminatedUnion("reason", [
    z.object({ action: z.string(), reason: z.literal("failed"), error: z.string(), budget: StoppingBudget.optional() }),
    z.object({ action: z.string(), reason: z.literal("not-run"), missing: z.array(z.string()) }),
    z.object({ action: z.string(), reason: z.literal("no-data"), noData: z.enum(["empty", "stopped", "no-baseline", "none-at-time", "too-few"]) }),
  ])
  .meta({ id: "UncheckedAction" });
export type UncheckedAction = z.infer<typeof UncheckedAction>;

/**
 * What the analysis concluded, as data (an extension of the spec's result): `highlights` is rendered from
 * it. `conclusion` is `cause` (with `cause`), `ambiguous` (two candidates the rules cannot tell apart:
 * `cause` and `alternative`, both of low confidence) or `no-cause` (nothing abnormal, or symptoms of no
 * cause's kind and no change before them). `symptoms` are the incident's, strongest first (the cause
 * among them when it is one); `background` what was abnormal since well before the issue time; `paged`
 * the alerts that paged, context rather than symptoms.
 */
export const Verdict = z
  .object({
    conclusion: z.enum(["cause", "no-cause", "ambiguous"]),
    cause: VerdictCause.optional(),
    alternative: VerdictCause.optional(),
    symptoms: z.array(VerdictFinding),
    background: z.array(VerdictFinding),
    /** The page: alerts firing for what the issue is about, found by an alert query. Context, never a symptom; absent when none fired. */
    paged: z.array(VerdictFinding).optional(),
    ruledOut: z.array(RuledOutChange),
    normal: z.array(NormalAction),
    unchecked: z.array(UncheckedAction),
    partial: z
      .object({ budgets: z.array(StoppingBudget) })
      .optional()
      .meta({
        description:
          "Present when budgets stopped some of its actions (listed in `unchecked` with their `budget`): the verdict is judged from the evidence it had. `budgets`: which, in the order of the actions they stopped.",
      }),
  })
  .meta({ id: "Verdict" });
export type Verdict = z.infer<typeof Verdict>;
