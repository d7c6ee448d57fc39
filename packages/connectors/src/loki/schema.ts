import { z } from "zod";
import { connectionFields } from "../connection-options.js";
import { GrafanaExplore } from "../grafana-explore.js";
import { BasicAuth, BearerAuth } from "../http-auth.js";

/** Lines read per phase (before the issue, around it) at most: enough to find patterns, cheap to read. */
export const MAX_LOKI_LINES = 5000;

/** A Grafana Loki HTTP API (or a compatible one, such as Grafana Cloud Logs). */
export const LokiDataSource = z.strictObject({
  type: z.literal("loki"),
  url: z.url({ protocol: /^https?$/ }),
  ...connectionFields,
  /**
   * The tenant (`X-Scope-OrgID`) of a multi-tenant Loki; `a|b` reads several. Loki's own rule for tenant
   * IDs, so that no value can add a header line.
   */
  tenant: z
    .string()
    .regex(/^[A-Za-z0-9!._*'()|-]{1,150}$/, "tenant must be a Loki tenant ID (letters, digits and !-_.*'(), several joined by |)")
    .optional(),
  /** When set, links open the query in Grafana Explore with this Loki data source. */
  grafana: GrafanaExplore.optional(),
  auth: z.union([BearerAuth, BasicAuth]).optional(),
});
export type LokiDataSource = z.infer<typeof LokiDataSource>;

/**
 * One LogQL log query of a playbook action: a stream selector and any pipeline, e.g.
 * `{app={{service}}} |= "error"`. `{{name}}` placeholders become LogQL string literals (`{{name|regex}}`:
 * regex-escaped, for `=~` and `|~`), so write them without quotes: a value can never change the query.
 * The lines are counted over the window and the latest `limit` of each phase are read for patterns.
 */
export const LokiAction = z.strictObject({
  selector: z
    .string()
    .min(1)
    .refine((selector) => selector.trimStart().startsWith("{"), "selector must be a LogQL log query: a stream selector {…}, then any filters"),
  limit: z.number().int().min(1).max(MAX_LOKI_LINES).default(1000),
});
export type LokiAction = z.infer<typeof LokiAction>;
