import { AllowedTeams, BudgetLimits } from "@pes/contracts";
import { z } from "zod";
import { connectorRegistry, type ConnectorRegistry } from "@pes/connectors/schemas";
import { GadgetUpstreams } from "./gadget-upstreams.js";
import { parseDuration, PlaybookDuration } from "./playbook-duration.js";

const ActionBase = {
  title: z.string().min(1),
  /** The name of one of the organization's data sources; its type must match the action's query key. */
  dataSource: z.string().min(1),
};

/**
 * An action is one query to one data source; the query key names the connector type, and the query is
 * what that connector's schema accepts: one alternative per connector of the registry. Once it passed,
 * the action reads as title, data source and a query under its connector's key (the registry's
 * `connectorOf` says which).
 */
function actionDefinitionSchema(connectors: ConnectorRegistry) {
  const alternatives = connectors.connectors.map((connector) => z.strictObject({ ...ActionBase, [connector.type]: connector.query }));
  return z.union(alternatives).pipe(z.looseObject(ActionBase));
}

function gadgetDefinitionSchema(connectors: ConnectorRegistry) {
  return z.strictObject({
    title: z.string().min(1),
    /** Arguments reported back in gadgetsHighlights[].args; string leaves are templates. */
    args: z.record(z.string(), z.unknown()).optional(),
    /** Instantiates the gadget once per upstream service, `{{upstream}}` bound to its name (gadget-upstreams.ts). */
    upstreams: GadgetUpstreams.optional(),
    actions: z.array(actionDefinitionSchema(connectors)).min(1),
  });
}

const CHANGE_KINDS = ["deploy", "config", "restart"] as const;
/** What a likely cause can be: a change, or a symptom of a cause's kind (the verdict's kinds of cause). */
const CAUSE_KINDS = [
  ...CHANGE_KINDS,
  "saturation",
  "outage",
  "oom",
  "crash-loop",
  "eviction",
  "node-not-ready",
  "unschedulable",
  "alert",
  "upstream",
  "node",
] as const;
/** The longest silence a mitigation offers: one that outlives the incident hides the next one. */
export const MAX_SILENCE_MS = 24 * 3_600_000;

/**
 * When a mitigation fits the findings; every condition given must hold, and a template without `when`
 * is always offered. `abnormal`: something abnormal was found (false: nothing was); `change`: a change
 * of this kind came before the issue time, whatever the analysis made of it; `likelyCause`: the likely
 * cause is of this kind (a change's, or a symptom's such as `saturation`); `action`: the action with this title (as the playbook writes it) found
 * something abnormal or is the likely cause.
 */
export const MitigationWhen = z
  .strictObject({
    abnormal: z.boolean().optional(),
    change: z.enum(CHANGE_KINDS).optional(),
    likelyCause: z.enum(CAUSE_KINDS).optional(),
    action: z.string().min(1).optional(),
  })
  .refine((when) => Object.keys(when).length > 0, "give at least one of abnormal, change, likelyCause, action");
export type MitigationWhen = z.infer<typeof MitigationWhen>;

/** A label name, as Alertmanager's matchers take it. */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * An Alertmanager silence, rendered as the mitigation's `action` in Alertmanager's API v2 form (ready to
 * POST to `/api/v2/silences`): exact matchers only (a value is matched as it is, never as a regex),
 * from the issue time for `duration` (at most 24 h). With `dataSource` (an Alertmanager
 * data source) the mitigation's `url` is that Alertmanager's silence form, filled in.
 */
export const MitigationSilence = z.strictObject({
  dataSource: z.string().min(1).optional(),
  matchers: z
    .array(
      z.strictObject({
        name: z.string().regex(LABEL_NAME, "must be a label name (letters, digits and _, not starting with a digit)"),
        value: z.string(),
      }),
    )
    .min(1, "a silence needs at least one matcher: without one it would silence everything"),
  duration: PlaybookDuration.refine((text) => parseDuration(text) > 0 && parseDuration(text) <= MAX_SILENCE_MS, "must be more than 0 and at most 24h"),
  comment: z.string().min(1).optional(),
  createdBy: z.string().min(1).optional(),
});
export type MitigationSilence = z.infer<typeof MitigationSilence>;

/** A template of an actionable mitigation; string leaves are filled with the attributes. */
export const MitigationTemplate = z
  .strictObject({
    toolName: z.string().min(1),
    customName: z.string().optional(),
    url: z.string().optional(),
    action: z.record(z.string(), z.unknown()).optional(),
    when: MitigationWhen.optional(),
    silence: MitigationSilence.optional(),
    /**
     * Renders the mitigation once per upstream, `{{upstream}}` bound to its name, as a gadget's upstreams
     * (gadget-upstreams.ts): a mitigation that acts on the dependency found at fault names it.
     */
    upstreams: GadgetUpstreams.optional(),
  })
  .refine((template) => template.silence === undefined || template.action === undefined, {
    message: "a silence is the mitigation's action: give silence or action, not both",
    path: ["silence"],
  })
  .refine((template) => template.silence?.dataSource === undefined || template.url === undefined, {
    message: "with silence.dataSource the url is that Alertmanager's silence form: leave url out",
    path: ["url"],
  });
export type MitigationTemplate = z.infer<typeof MitigationTemplate>;

/** The schema of a playbook file whose actions use the connectors of `connectors`. */
export function playbookDefinitionSchema(connectors: ConnectorRegistry) {
  return z.strictObject({
    name: z.string().min(1).max(256),
    monitorNames: z.array(z.string().min(1)).default([]),
    requiredAttributes: z.array(z.string().min(1)).optional(),
    /**
     * Attributes the templates may use although no monitor name captures them and they are not required:
     * an action or mitigation that uses one is skipped when the issue lacks it. Declaring them lets
     * configuration loading reject any other unknown placeholder (a typo) instead of silently skipping.
     */
    optionalAttributes: z.array(z.string().min(1)).optional(),
    /** How far around the issue time the actions look: `before` is also the baseline for "normal". */
    window: z.strictObject({ before: PlaybookDuration.default("1h"), after: PlaybookDuration.default("15m") }).default({ before: "1h", after: "15m" }),
    gadgets: z.array(gadgetDefinitionSchema(connectors)).min(1),
    mitigations: z.array(MitigationTemplate).default([]),
    /**
     * The teams of the organization that may run it (absent: every team). Its data sources' own `teams`
     * narrow it further (team-access.ts in the configuration).
     */
    teams: AllowedTeams.optional(),
    /** What one execution of it may spend; its organization's budget applies too (the smaller wins per kind). */
    budget: BudgetLimits.optional(),
  });
}

/** One playbook file (YAML) of an organization, with the stock connectors. */
export const PlaybookDefinition = playbookDefinitionSchema(connectorRegistry);
export type PlaybookDefinition = z.infer<typeof PlaybookDefinition>;
export type GadgetDefinition = PlaybookDefinition["gadgets"][number];
export type ActionDefinition = GadgetDefinition["actions"][number];
