import { z } from "zod";
import { CHANGE_TYPES, Observation } from "./observation.js";
import { ActionableMitigation } from "./execution-result.js";
import { Verdict } from "./execution-verdict.js";
import { OwnerTeams } from "./team-names.js";

/** The version of the bundle format this build writes. A reader takes any version: later ones only add. */
export const EVIDENCE_BUNDLE_VERSION = 1;

const Instant = z.iso.datetime({ offset: true });

/** An action's window as a bundle holds it: ISO 8601 instants. */
export const BundleWindow = z.object({ start: Instant, time: Instant, end: Instant });
export type BundleWindow = z.infer<typeof BundleWindow>;

/**
 * An observation of a kind this build does not know (a later version's): kept, read as an action that
 * could not be replayed rather than refusing the whole bundle.
 */
const LaterObservation = z.looseObject({ kind: z.string() });

/**
 * How an action's observation was cut so that its bundle fits its organization's cap (`evidence.maxBytes`),
 * each cut kept only when the bundle still replayed to the same verdict, unless nothing else fitted:
 * `thinned`: the lists at `path` (`*` for each element of a list: `data.result.*.values`, a series'
 * samples) keep one element in `every`, the last always, `kept` of `of` elements in all; `shortened`:
 * `texts` texts longer than `maxChars` were cut there and end in "…"; `left-out`: the whole observation
 * (`bytes` long) did not fit, and a `failed` one stands in for it. A later version's cut reads as its kind.
 */
export const ObservationCut = z.union([
  z.object({ cut: z.literal("thinned"), path: z.string(), every: z.int().min(2), kept: z.int().nonnegative(), of: z.int().nonnegative() }),
  z.object({ cut: z.literal("shortened"), maxChars: z.int().positive(), texts: z.int().nonnegative() }),
  z.object({ cut: z.literal("left-out"), bytes: z.int().nonnegative() }),
  z.looseObject({ cut: z.string() }),
]);
export type ObservationCut = z.infer<typeof ObservationCut>;

/** The cap a bundle was cut to fit (bytes of its JSON), and its size before. */
export const BundleTruncation = z.object({ maxBytes: z.int().positive(), bytes: z.int().positive() });
export type BundleTruncation = z.infer<typeof BundleTruncation>;

/**
 * One action of a recorded execution: its title and gadget (the verdict cites them), its connector type,
 * the query as it was sent (every template filled), the window it asked for, and what its source answered.
 */
export const BundleAction = z.object({
  /** The gadget it belongs to; a hand-written bundle may leave it out (its title stands in). */
  gadget: z.string().optional(),
  title: z.string(),
  /** The connector's type (`prometheus`, `loki`…): for a person; the analysis reads the observation's kind. */
  connector: z.string().optional(),
  /** Absent when the query could not be filled (the issue lacks an attribute). */
  query: z.unknown().optional(),
  /** The upstream service its gadget's instance is about (a gadget's `upstreams`); absent for the paged service's. */
  upstream: z.string().optional(),
  /**
   * The window it asked for: the playbook's, or a wider one when the engine looked back before a trend
   * (then the observation is that second look's, the one the verdict was judged from).
   */
  window: BundleWindow,
  observation: z.union([Observation, LaterObservation]),
  /** How its observation was cut to fit the bundle's cap; absent when it is whole. */
  truncated: z.array(ObservationCut).optional(),
});
export type BundleAction = z.infer<typeof BundleAction>;

/**
 * When a playbook's mitigation is offered (its `when`, every template filled): the findings are abnormal
 * or not, a change of that kind came before the issue, the likely cause is of that kind, an action showed a symptom.
 */
export const MitigationCondition = z.object({
  abnormal: z.boolean().optional(),
  change: z.enum(CHANGE_TYPES).optional(),
  /** A change's kind or a cause's (`saturation`, `upstream`, `node`…); read as any text, so that a later kind still reads. */
  likelyCause: z.string().optional(),
  action: z.string().optional(),
});
export type MitigationCondition = z.infer<typeof MitigationCondition>;

/**
 * A mitigation of the playbook as the execution rendered it (every template filled; one the issue could
 * not fill is left out, as the execution left it out), when it is offered, and whether the execution
 * offered it: a replay offers those whose `when` its findings meet, exactly as the worker did.
 */
export const BundleMitigation = z.object({
  /**
   * As the result gives it, but for the link to an Alertmanager's silence form, which holds that data
   * source's address: a bundle never holds one (`silenceForm` names the data source instead).
   */
  mitigation: ActionableMitigation,
  when: MitigationCondition.optional(),
  /** The Alertmanager data source whose silence form the result's `url` opened, left out here. */
  silenceForm: z.string().optional(),
  /** Whether the execution offered it (its findings met `when`); absent in a hand-written bundle. */
  offered: z.boolean().optional(),
});
export type BundleMitigation = z.infer<typeof BundleMitigation>;

/**
 * What an execution's actions observed, kept so that its analysis can be re-run offline (`pes replay`,
 * `pes eval`): the issue, then per action what it asked and what came back. Never a data source's URL,
 * credentials or headers; the data sources' secrets are redacted from every text of it. Read tolerantly:
 * fields a later version adds are dropped, and an observation of an unknown kind is kept as it is.
 */
export const EvidenceBundle = z
  .object({
    v: z.number().int().positive(),
    /** The execution it was recorded from, and when: the API writes both; a hand-written bundle may leave them out. */
    executionId: z.string().optional(),
    recordedAt: Instant.optional(),
    issue: z.object({
      bookName: z.string(),
      title: z.string().optional(),
      time: Instant,
      attributes: z.record(z.string(), z.string()),
      /** The services the paged one calls, as the playbook declared them for this issue (its gadgets' upstreams). */
      upstreams: z.array(z.string()).optional(),
    }),
    actions: z.array(BundleAction),
    /** The playbook's mitigations as the execution rendered them, so that a replay offers the same ones. */
    mitigations: z.array(BundleMitigation).default([]),
    /** The verdict the execution reached when it was recorded: what a replay is compared with. */
    verdict: Verdict.optional(),
    /** Present when observations were cut to fit the cap (each action's `truncated` says how). */
    truncated: BundleTruncation.optional(),
    /** The teams of the organization its execution ran for: who may read it (absent: no team, or recorded before teams). */
    teams: OwnerTeams.optional(),
  })
  .meta({ id: "EvidenceBundle" });
export type EvidenceBundle = z.infer<typeof EvidenceBundle>;

/**
 * A cause as a case expects it: its kind, and, when given, its subject, the action that showed it, and a
 * pattern its detail matches (a regular expression, case-insensitive: `yourcompany/crw`, `Failed to resolve`).
 */
const ExpectedCause = z.object({
  kind: z.string(),
  subject: z.string().optional(),
  action: z.string().optional(),
  detailPattern: z.string().optional(),
});

/**
 * What a case of `pes eval` expects of a bundle's verdict: its conclusion, and when given the cause (its
 * kind, and its subject, action or detail when given), for an ambiguous one the alternative too (the two
 * in either order), and the mitigations that fit it (by title).
 */
export const ExpectedVerdict = z.object({
  conclusion: z.enum(["cause", "no-cause", "ambiguous"]),
  cause: ExpectedCause.optional(),
  alternative: ExpectedCause.optional(),
  mitigations: z.array(z.string()).optional(),
});
export type ExpectedVerdict = z.infer<typeof ExpectedVerdict>;
