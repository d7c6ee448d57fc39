import type { z } from "zod";
import { connectorRegistry } from "./stock-connectors.js";

/** A data source of an organization, by connector type: the union of the stock connectors' data sources. */
export const DataSource = connectorRegistry.dataSource;
export type DataSource = z.infer<typeof DataSource>;
