import type { ConnectorRuntime } from "@pes/connectors";
import type { ToyDataSource, ToyQuery } from "./schema.js";

/** Says the filled word back, signed by its data source. */
export const toyRuntime: ConnectorRuntime<ToyDataSource, ToyQuery> = {
  fetch: async ({ title, dataSource, query, link }) => ({
    kind: "answer",
    action: title,
    text: `${query.word}, says ${dataSource.signature}`,
    ...(link === undefined ? {} : { link }),
  }),
};
