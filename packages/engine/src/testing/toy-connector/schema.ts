import { defineConnector, type TemplateEncoding } from "@pes/connectors";
import { fillTemplate } from "@pes/templates";
import { z } from "zod";

/** A toy data source: a base URL (for its links) and the name it signs its answers with. */
export const ToyDataSource = z.strictObject({
  type: z.literal("toy"),
  url: z.url(),
  signature: z.string().min(1),
});
export type ToyDataSource = z.infer<typeof ToyDataSource>;

/** A toy query: one word, a template whose values are written in capitals with `|loud`. */
export const ToyQuery = z.strictObject({ word: z.string().min(1) });
export type ToyQuery = z.infer<typeof ToyQuery>;

/** Its own template language, with its own filter: what a new connector brings along. */
const toyWord: TemplateEncoding = {
  target: "toy",
  filters: { names: ["loud"], where: "toy words" },
  fill: (template, attributes) => fillTemplate(template, attributes, (value, placeholder) => (placeholder.filter === "loud" ? value.toUpperCase() : value)),
};

/** A connector that answers from its filled query, without I/O: the smallest thing the seam must carry. */
export const toyConnector = defineConnector({
  type: "toy",
  noun: "a toy data source",
  builds: "word",
  dataSource: ToyDataSource,
  query: ToyQuery,
  templates: [{ path: ["word"], encoding: toyWord }],
  link: (dataSource, query) => `${dataSource.url}/words/${encodeURIComponent(query.word)}`,
  // A mitigation kind the connector offers: a silence's link, signed as its answers are.
  mitigationLinks: {
    silence: (dataSource, matchers) =>
      `${dataSource.url}/hush?${new URLSearchParams([...matchers.map((matcher): [string, string] => [matcher.name, matcher.value]), ["by", dataSource.signature]])}`,
  },
  runtime: async () => (await import("./runtime.js")).toyRuntime,
});
