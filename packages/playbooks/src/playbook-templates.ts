import { absoluteUrlTemplate, connectorRegistry, textTemplate, valueAtPath, type ConnectorRegistry, type TemplateEncoding } from "@pes/connectors/schemas";
import { placeholdersIn, type Placeholder } from "@pes/templates";
import type { PlaybookDefinition } from "./playbook-definition.js";

/** One templated string of a playbook, where it is, and how its values are written. */
export interface PlaybookTemplate {
  /** Path in the playbook file, e.g. `["gadgets", 0, "actions", 1, "prometheus", "query"]`. */
  path: (string | number)[];
  template: string;
  /** How its values are written: `text` as is, `url` as one URL component, `promql`, `json`… */
  target: string;
  /** The encoding that fills it: its filters and, for a URL, what the filled URL must keep. */
  encoding: TemplateEncoding;
  /** Its placeholders, in order (repeats included). */
  placeholders: Placeholder[];
}

type Found = Omit<PlaybookTemplate, "placeholders" | "target">;

/**
 * Every string of a playbook that is filled with attributes (monitor names excluded: they are patterns,
 * not templates). Configuration loading checks their placeholders; the list is the one place that says
 * which fields are templates: titles, args and mitigations here, each action's query fields as its
 * connector declares them.
 */
export function templatesOf(playbook: PlaybookDefinition, connectors: ConnectorRegistry = connectorRegistry): PlaybookTemplate[] {
  const templates: Found[] = [];
  playbook.gadgets.forEach((gadget, g) => {
    templates.push({ path: ["gadgets", g, "title"], template: gadget.title, encoding: textTemplate });
    if (gadget.args !== undefined) collectLeaves(gadget.args, ["gadgets", g, "args"], textTemplate, templates);
    gadget.actions.forEach((action, a) => {
      const at = ["gadgets", g, "actions", a];
      templates.push({ path: [...at, "title"], template: action.title, encoding: textTemplate });
      const connector = connectors.connectorOf(action);
      if (connector === undefined) return;
      for (const field of connector.templates) {
        const value = valueAtPath(action, [connector.type, ...field.path]);
        const path = [...at, connector.type, ...field.path];
        if (field.leaves === true) collectLeaves(value, path, field.encoding, templates);
        else if (typeof value === "string") templates.push({ path, template: value, encoding: field.encoding });
      }
    });
  });
  playbook.mitigations.forEach((mitigation, m) => {
    const at = ["mitigations", m];
    templates.push({ path: [...at, "toolName"], template: mitigation.toolName, encoding: textTemplate });
    if (mitigation.customName !== undefined) {
      templates.push({ path: [...at, "customName"], template: mitigation.customName, encoding: textTemplate });
    }
    if (mitigation.url !== undefined) templates.push({ path: [...at, "url"], template: mitigation.url, encoding: absoluteUrlTemplate });
    if (mitigation.action !== undefined) collectLeaves(mitigation.action, [...at, "action"], textTemplate, templates);
    if (mitigation.when?.action !== undefined) templates.push({ path: [...at, "when", "action"], template: mitigation.when.action, encoding: textTemplate });
    const { silence } = mitigation;
    if (silence !== undefined) {
      silence.matchers.forEach((matcher, index) => {
        templates.push({ path: [...at, "silence", "matchers", index, "value"], template: matcher.value, encoding: textTemplate });
      });
      if (silence.comment !== undefined) templates.push({ path: [...at, "silence", "comment"], template: silence.comment, encoding: textTemplate });
      if (silence.createdBy !== undefined) templates.push({ path: [...at, "silence", "createdBy"], template: silence.createdBy, encoding: textTemplate });
    }
  });
  return templates.map((template) => ({ ...template, target: template.encoding.target, placeholders: placeholdersIn(template.template) }));
}

function collectLeaves(value: unknown, path: (string | number)[], encoding: TemplateEncoding, into: Found[]): void {
  if (typeof value === "string") {
    into.push({ path, template: value, encoding });
  } else if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) collectLeaves(item, [...path, index], encoding, into);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) collectLeaves(item, [...path, key], encoding, into);
  }
}
