import { dataSourceBaseUrl } from "../template-encodings.js";

/** The URL an http action asks: the data source's URL, then the filled path. */
export function httpRequestUrl(dataSource: { url: string }, query: { path: string }): string {
  return `${dataSourceBaseUrl(dataSource)}${query.path}`;
}
