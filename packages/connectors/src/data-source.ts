import { z } from "zod";
import { HttpDataSource } from "./http/http-schemas.js";
import { PrometheusDataSource } from "./prometheus/prometheus-schemas.js";

/** A data source of an organization, by connector type. Adding a connector adds a member here. */
export const DataSource = z.discriminatedUnion("type", [PrometheusDataSource, HttpDataSource]);
export type DataSource = z.infer<typeof DataSource>;
export type DataSourceType = DataSource["type"];
