import type { ConnectorRuntime } from "@pes/connectors";
import type { TextObservation } from "@pes/contracts";
import type { ToyDataSource, ToyQuery } from "./schema.js";

/** Says the filled word back, signed by its data source. */
export const toyRuntime: ConnectorRuntime<ToyDataSource, ToyQuery, TextObservation> = {
  fetch: async ({ dataSource, query }) => ({ kind: "text", text: `${query.word}, says ${dataSource.signature}` }),
};
