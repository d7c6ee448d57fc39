import { z } from "zod";
import type { TimeWindow } from "./connector.js";
import { baseUrlOf } from "./url-text.js";

/** A Grafana whose Explore opens a data source's queries: its address, the data source's uid there, its organization. */
export const GrafanaExplore = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  datasourceUid: z.string().min(1),
  orgId: z.number().int().positive().default(1),
});
export type GrafanaExplore = z.infer<typeof GrafanaExplore>;

/** One query of an Explore pane: its expression, and any fields of its data-source type (Loki's `queryType`). */
interface GrafanaQuery {
  expr: string;
  readonly [field: string]: string;
}

/**
 * Grafana Explore over the window with these queries of the data source (of Grafana type `type`), as
 * Grafana ≥ 10.2 writes its state: one pane "a" with the queries A, B…, each `expr` and its own fields.
 */
export function grafanaExploreLink(grafana: GrafanaExplore, type: string, queries: readonly GrafanaQuery[], window: TimeWindow): string {
  const { datasourceUid, orgId } = grafana;
  const panes = {
    a: {
      datasource: datasourceUid,
      queries: queries.map((query, index) => ({ refId: String.fromCharCode(65 + index), datasource: { type, uid: datasourceUid }, ...query })),
      range: { from: String(window.start.getTime()), to: String(window.end.getTime()) },
    },
  };
  return `${baseUrlOf(grafana)}/explore?schemaVersion=1&orgId=${orgId}&panes=${encodeURIComponent(JSON.stringify(panes))}`;
}
