import type { ActionableMitigation } from "@pes/contracts";
import { asText, fillTemplate, fillTemplates, fillUrlTemplate, MissingAttributesError, UnsafeValueError } from "@pes/templates";
import type { MitigationTemplate } from "./playbook-definition.js";

/**
 * Fills a playbook's mitigation templates with the attributes.
 *
 * - `toolName` and `customName` are text; `url` is the playbook's own URL with each value URL-encoded as
 *   one component (fillUrlTemplate), so a value cannot change the scheme, host or path structure; `action`
 *   is JSON whose string leaves are filled as text. An action is data for whoever runs it: a value lands
 *   inside one JSON string, never spliced into a shell command line.
 * - A mitigation that needs an attribute the issue does not have, or whose URL would take a value it
 *   refuses (a dot segment such as `..`, which would point the URL at another path), is left out: it
 *   cannot be carried out as written, and the other mitigations still are.
 */
export function renderMitigations(
  templates: readonly MitigationTemplate[],
  attributes: Readonly<Record<string, string>>,
): ActionableMitigation[] {
  const mitigations: ActionableMitigation[] = [];
  for (const template of templates) {
    const mitigation = renderMitigation(template, attributes);
    if (mitigation !== undefined) mitigations.push(mitigation);
  }
  return mitigations;
}

function renderMitigation(
  template: MitigationTemplate,
  attributes: Readonly<Record<string, string>>,
): ActionableMitigation | undefined {
  try {
    const mitigation: ActionableMitigation = { toolName: fillTemplate(template.toolName, attributes, asText) };
    if (template.customName !== undefined) mitigation.customName = fillTemplate(template.customName, attributes, asText);
    if (template.url !== undefined) mitigation.url = fillUrlTemplate(template.url, attributes);
    if (template.action !== undefined) {
      mitigation.action = Object.fromEntries(
        Object.entries(template.action).map(([key, value]) => [key, fillTemplates(value, attributes, asText)]),
      );
    }
    return mitigation;
  } catch (error) {
    if (error instanceof MissingAttributesError || error instanceof UnsafeValueError) return undefined;
    throw error;
  }
}
