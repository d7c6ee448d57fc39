import { placeholdersIn, type Placeholder } from "@pes/templates";
import type { PlaybookDefinition } from "./playbook-definition.js";

/**
 * How a template's values are written: `text` as is, `url` as one URL component, `promql` as a PromQL
 * string literal (or regex-escaped with `|regex`), `json` as (part of) a JSON string.
 */
export type TemplateTarget = "text" | "url" | "promql" | "json";

/** One templated string of a playbook, where it is, and how its values are written. */
export interface PlaybookTemplate {
  /** Path in the playbook file, e.g. `["gadgets", 0, "actions", 1, "prometheus", "query"]`. */
  path: (string | number)[];
  template: string;
  target: TemplateTarget;
  /** Its placeholders, in order (repeats included). */
  placeholders: Placeholder[];
}

/**
 * Every string of a playbook that is filled with attributes (monitor names excluded: they are patterns,
 * not templates). Configuration loading checks their placeholders; the list is the one place that says
 * which fields are templates.
 */
export function templatesOf(playbook: PlaybookDefinition): PlaybookTemplate[] {
  const templates: Omit<PlaybookTemplate, "placeholders">[] = [];
  playbook.gadgets.forEach((gadget, g) => {
    templates.push({ path: ["gadgets", g, "title"], template: gadget.title, target: "text" });
    if (gadget.args !== undefined) collectLeaves(gadget.args, ["gadgets", g, "args"], "text", templates);
    gadget.actions.forEach((action, a) => {
      const at = ["gadgets", g, "actions", a];
      templates.push({ path: [...at, "title"], template: action.title, target: "text" });
      if ("prometheus" in action) {
        templates.push({ path: [...at, "prometheus", "query"], template: action.prometheus.query, target: "promql" });
      } else {
        templates.push({ path: [...at, "http", "path"], template: action.http.path, target: "url" });
        if (action.http.link !== undefined) {
          templates.push({ path: [...at, "http", "link"], template: action.http.link, target: "url" });
        }
        if (action.http.body !== undefined) collectLeaves(action.http.body, [...at, "http", "body"], "json", templates);
      }
    });
  });
  playbook.mitigations.forEach((mitigation, m) => {
    const at = ["mitigations", m];
    templates.push({ path: [...at, "toolName"], template: mitigation.toolName, target: "text" });
    if (mitigation.customName !== undefined) {
      templates.push({ path: [...at, "customName"], template: mitigation.customName, target: "text" });
    }
    if (mitigation.url !== undefined) templates.push({ path: [...at, "url"], template: mitigation.url, target: "url" });
    if (mitigation.action !== undefined) collectLeaves(mitigation.action, [...at, "action"], "text", templates);
  });
  return templates.map((template) => ({ ...template, placeholders: placeholdersIn(template.template) }));
}

function collectLeaves(
  value: unknown,
  path: (string | number)[],
  target: TemplateTarget,
  into: Omit<PlaybookTemplate, "placeholders">[],
): void {
  if (typeof value === "string") {
    into.push({ path, template: value, target });
  } else if (Array.isArray(value)) {
    value.forEach((item: unknown, index) => collectLeaves(item, [...path, index], target, into));
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) collectLeaves(item, [...path, key], target, into);
  }
}
