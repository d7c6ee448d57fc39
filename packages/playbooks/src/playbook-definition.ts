import { z } from "zod";
import { HttpAction, PrometheusAction } from "@pes/connectors";

const duration = z
  .string()
  .regex(/^\d+(ms|s|m|h|d)$/, 'a duration such as "90s", "15m", "1h" or "2d"');

const ActionBase = {
  title: z.string().min(1),
  /** The name of one of the organization's data sources; its type must match the action's query key. */
  dataSource: z.string().min(1),
};

/** An action is one query to one data source; the query key names the connector type. */
export const ActionDefinition = z.union([
  z.strictObject({ ...ActionBase, prometheus: PrometheusAction }),
  z.strictObject({ ...ActionBase, http: HttpAction }),
]);
export type ActionDefinition = z.infer<typeof ActionDefinition>;

export const GadgetDefinition = z.strictObject({
  title: z.string().min(1),
  /** Arguments reported back in gadgetsHighlights[].args; string leaves are templates. */
  args: z.record(z.string(), z.unknown()).optional(),
  actions: z.array(ActionDefinition).min(1),
});
export type GadgetDefinition = z.infer<typeof GadgetDefinition>;

/** A template of an actionable mitigation; string leaves are filled with the attributes. */
export const MitigationTemplate = z.strictObject({
  toolName: z.string().min(1),
  customName: z.string().optional(),
  url: z.string().optional(),
  action: z.record(z.string(), z.unknown()).optional(),
});
export type MitigationTemplate = z.infer<typeof MitigationTemplate>;

/** One playbook file (YAML) of an organization. */
export const PlaybookDefinition = z.strictObject({
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
  gadgets: z.array(GadgetDefinition).min(1),
  mitigations: z.array(MitigationTemplate).default([]),
});
export type PlaybookDefinition = z.infer<typeof PlaybookDefinition>;
