import { z } from "zod";
import { connectorRegistry, type ConnectorRegistry } from "@pes/connectors/schemas";

const duration = z
  .string()
  .regex(/^\d+(ms|s|m|h|d)$/, 'a duration such as "90s", "15m", "1h" or "2d"');

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
    actions: z.array(actionDefinitionSchema(connectors)).min(1),
  });
}

/** A template of an actionable mitigation; string leaves are filled with the attributes. */
export const MitigationTemplate = z.strictObject({
  toolName: z.string().min(1),
  customName: z.string().optional(),
  url: z.string().optional(),
  action: z.record(z.string(), z.unknown()).optional(),
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
    window: z.strictObject({ before: duration.default("1h"), after: duration.default("15m") }).default({ before: "1h", after: "15m" }),
    gadgets: z.array(gadgetDefinitionSchema(connectors)).min(1),
    mitigations: z.array(MitigationTemplate).default([]),
  });
}

/** One playbook file (YAML) of an organization, with the stock connectors. */
export const PlaybookDefinition = playbookDefinitionSchema(connectorRegistry);
export type PlaybookDefinition = z.infer<typeof PlaybookDefinition>;
export type GadgetDefinition = PlaybookDefinition["gadgets"][number];
export type ActionDefinition = GadgetDefinition["actions"][number];
