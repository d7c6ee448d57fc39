import type { ActionOutcome, ActionRequest } from "./connector.js";
import type { DataSourceType } from "./data-source.js";
import { runHttpAction } from "./http/http-connector.js";
import { runPrometheusAction } from "./prometheus/prometheus-connector.js";

type RequestOf = { [T in DataSourceType]: ActionRequest<T> };

/** An action request of any connector type, as a proper union (data source and spec always agree). */
export type AnyActionRequest = RequestOf[DataSourceType];

/** One connector per data-source type: adding a type to DataSource without a connector fails to compile. */
const connectors: { [T in DataSourceType]: (request: RequestOf[T]) => Promise<ActionOutcome> } = {
  prometheus: runPrometheusAction,
  http: runHttpAction,
};

/** Runs an action with the connector of its data source's type. */
export function runAction(request: AnyActionRequest): Promise<ActionOutcome> {
  return dispatch(request.dataSource.type, request);
}

// Written generically so that TypeScript can see that the type and the request belong together.
function dispatch<T extends DataSourceType>(type: T, request: RequestOf[T]): Promise<ActionOutcome> {
  const connector: (request: RequestOf[T]) => Promise<ActionOutcome> = connectors[type];
  return connector(request);
}
