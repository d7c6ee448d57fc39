import { asText, fillTemplate, fillUrlTemplate } from "@pes/templates";
import type { TemplateEncoding } from "./connector-definition.js";

/** Text as it is, e.g. inside a JSON string of a body (the body is serialized after filling). */
export const jsonStringTemplate: TemplateEncoding = {
  target: "json",
  fill: (template, attributes) => fillTemplate(template, attributes, asText),
};

/**
 * A full URL (a link): each value one URL component, and scheme and host literal before the first
 * placeholder; the filled URL keeps the origin and path its text fixes (fillUrlTemplate).
 */
export const absoluteUrlTemplate: TemplateEncoding = {
  target: "url",
  url: "absolute",
  fill: (template, attributes) => fillUrlTemplate(template, attributes),
};

/**
 * A path appended to the data source's URL: each value one URL component, and the request stays at or
 * under the data source's path. Fills to the path alone; the connector puts the data source's URL before it.
 */
export const dataSourcePathTemplate: TemplateEncoding = {
  target: "url",
  url: "under-data-source",
  fill: (template, attributes, dataSource) => {
    const base = dataSourceBaseUrl(dataSource);
    return fillUrlTemplate(template, attributes, base).slice(base.length);
  },
};

/** A data source's URL as a base that paths are appended to: without its trailing slashes. */
export function dataSourceBaseUrl(dataSource: { readonly url: string }): string {
  return dataSource.url.replace(/\/+$/, "");
}

/** Prose (titles, args, a mitigation's action): the value as it is. */
export const textTemplate: TemplateEncoding = {
  target: "text",
  fill: (template, attributes) => fillTemplate(template, attributes, asText),
};
