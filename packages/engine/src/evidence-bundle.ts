import type { Evidence } from "@pes/analysis";
import { mapEvidenceText, readObservation } from "@pes/analysis";
import {
  EVIDENCE_BUNDLE_VERSION,
  UnreadableObservationError,
  type BundleAction,
  type BundleMitigation,
  type EvidenceBundle,
  type ExecutionJob,
  type Observation,
  type TimeWindow,
  type Verdict,
} from "@pes/contracts";
import type { Observed } from "@pes/connectors";
import type { RenderedMitigation } from "@pes/playbooks";

/** A mitigation rendered for the issue, and whether the execution offered it. */
export interface KeptMitigation extends RenderedMitigation {
  offered: boolean;
}

/**
 * An action's evidence, as the worker and a replay read it: the analysis reads what the action observed
 * (citing its title, with its link, and the issue's attributes when it is about the paged service), then
 * the data source's secrets are redacted from every text, since a source may echo them.
 */
export function evidenceOf(observed: Observed, title: string, window: TimeWindow, attributes?: Readonly<Record<string, string>>): readonly Evidence[] {
  const context = {
    action: title,
    window,
    ...(observed.link === undefined ? {} : { link: observed.link }),
    ...(attributes === undefined ? {} : { attributes }),
  };
  return readObservation(observed.observation, context).map((evidence) => mapEvidenceText(evidence, observed.redact));
}

/** One action of an execution, as a bundle will keep it. */
export interface ActionToKeep {
  gadget: string;
  title: string;
  connector: string;
  /** The upstream its gadget's instance is about, if any. */
  upstream?: string;
  /** The window it ran over (a look-back's, when it ran again over a wider one). */
  window: TimeWindow;
  /** What it observed; absent when it never asked (no data source, cancelled before it started…). */
  observed?: Observed;
  /** Its evidence: a bundle keeps an action that never asked as the failure it was. */
  evidence: readonly Evidence[];
}

/**
 * The evidence bundle of an execution: the issue, then per action what it asked (the filled query) and
 * what came back, with the data source's secrets redacted from every text of both. Data source URLs,
 * credentials and headers are never in an observation or a query; the link of an action is left out too,
 * as it holds the data source's address.
 */
export function bundleOf(
  executionId: string,
  job: ExecutionJob,
  upstreams: readonly string[],
  actions: readonly ActionToKeep[],
  mitigations: readonly KeptMitigation[],
  verdict: Verdict,
  recordedAt: Date,
): EvidenceBundle {
  return {
    v: EVIDENCE_BUNDLE_VERSION,
    executionId,
    recordedAt: recordedAt.toISOString(),
    issue: {
      bookName: job.bookName,
      ...(job.title === undefined ? {} : { title: job.title }),
      time: job.time,
      attributes: job.attributes,
      ...(upstreams.length === 0 ? {} : { upstreams: [...upstreams] }),
    },
    actions: actions.map((action): BundleAction => {
      const { observed } = action;
      const observation: Observation = observed === undefined ? failureOf(action.evidence) : kept(observed.observation, observed.redact);
      return {
        gadget: action.gadget,
        title: action.title,
        connector: action.connector,
        ...(observed?.query === undefined ? {} : { query: redacted(observed.query, observed.redact) }),
        ...(action.upstream === undefined ? {} : { upstream: action.upstream }),
        window: bundleWindow(action.window),
        observation,
      };
    }),
    mitigations: mitigations.map(bundleMitigation),
    verdict,
    // Who may read it: the teams its execution ran for.
    ...(job.teams === undefined ? {} : { teams: [...job.teams] }),
  };
}

function bundleWindow(window: TimeWindow): EvidenceBundle["actions"][number]["window"] {
  return { start: window.start.toISOString(), time: window.time.toISOString(), end: window.end.toISOString() };
}

/** An action that never asked, as the failure (or skip) its evidence says it was. */
function failureOf(evidence: readonly Evidence[]): Observation {
  const [only] = evidence;
  if (only?.kind === "skipped") return { kind: "skipped", missing: [...only.missing] };
  if (only?.kind !== "failed") return { kind: "failed", reason: "not run" };
  return { kind: "failed", reason: only.reason, ...(only.budget === undefined ? {} : { budget: only.budget }) };
}

/**
 * The observation as plain JSON (a Prometheus answer read from its bytes becomes its array here), every
 * text redacted. An answer that turns out unreadable is kept as the failure the analysis made of it.
 */
function kept(observation: Observation, redact: (text: string) => string): Observation {
  try {
    return redacted(observation, redact) as Observation;
  } catch (error) {
    if (error instanceof UnreadableObservationError) return { kind: "failed", reason: redact(error.message) };
    throw error;
  }
}

/** A JSON value with `redact` applied to every string in it, keys included. */
function redacted(value: unknown, redact: (text: string) => string): unknown {
  return JSON.parse(JSON.stringify(value), (_key, item: unknown) => {
    if (typeof item === "string") return redact(item);
    if (item !== null && typeof item === "object" && !Array.isArray(item)) {
      return Object.fromEntries(Object.entries(item).map(([key, field]) => [redact(key), field]));
    }
    return item;
  });
}

/** A mitigation as the execution rendered it, whether it offered it; a silence form's link (an Alertmanager's address) left out. */
function bundleMitigation({ mitigation, when, silenceForm, offered }: KeptMitigation): BundleMitigation {
  const { url, ...rest } = mitigation;
  return {
    mitigation: silenceForm === undefined || url === undefined ? mitigation : rest,
    ...(when === undefined ? {} : { when }),
    ...(silenceForm === undefined ? {} : { silenceForm }),
    offered,
  };
}
