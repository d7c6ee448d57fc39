import { mitigationFits, type Ranking } from "@pes/analysis";
import type { ActionableMitigation, MitigationCondition } from "@pes/contracts";
import { asText, fillTemplate, fillTemplates, fillTextOrKeep, fillUrlTemplate, MissingAttributesError, UnsafeValueError } from "@pes/templates";
import { silenceAction, silenceFormUrl } from "./alertmanager-silence.js";
import type { MitigationTemplate, MitigationWhen } from "./playbook-definition.js";

/** What the mitigations of one execution are rendered against. */
export interface MitigationContext {
  /** What the analysis made of the findings: each template's `when` is checked against it. */
  ranking: Ranking;
  /** The issue time: `when.change` counts the changes before it, and a silence starts then. */
  time: Date;
  /** The UI address of the organization's Alertmanager data source of this name, if it has one. */
  alertmanagerUrl(dataSource: string): string | undefined;
}

/**
 * Renders a playbook's mitigation templates for one execution: those whose `when` the findings meet,
 * filled with the attributes.
 *
 * - `toolName` and `customName` are text; `url` is the playbook's own URL with each value URL-encoded as
 *   one component (fillUrlTemplate), so a value cannot change the scheme, host or path structure; `action`
 *   is JSON whose string leaves are filled as text. An action is data for whoever runs it: a value lands
 *   inside one JSON string, never spliced into a shell command line.
 * - `silence` becomes the action: an Alertmanager API v2 silence with exact matchers, from the issue time
 *   for its duration (the same findings give the same result); with a data source, `url` is that
 *   Alertmanager's silence form with the same matchers.
 * - A mitigation that needs an attribute the issue does not have, or whose URL would take a value it
 *   refuses (a dot segment such as `..`, which would point the URL at another path), is left out: it
 *   cannot be carried out as written, and the other mitigations still are.
 */
export function renderMitigations(
  templates: readonly MitigationTemplate[],
  attributes: Readonly<Record<string, string>>,
  context: MitigationContext,
): ActionableMitigation[] {
  const mitigations: ActionableMitigation[] = [];
  for (const template of templates) {
    if (template.when !== undefined && !meets(template.when, attributes, context)) continue;
    const mitigation = renderMitigation(template, attributes, context);
    if (mitigation !== undefined) mitigations.push(mitigation);
  }
  return mitigations;
}

/** Whether the findings meet every condition of `when` (mitigationFits), its action's title filled as the engine fills titles. */
function meets(when: MitigationWhen, attributes: Readonly<Record<string, string>>, context: MitigationContext): boolean {
  return mitigationFits(filledCondition(when, attributes), context.ranking, context.time);
}

/** A mitigation's `when` with its action's title filled (a missing attribute kept as written: titles are prose). */
export function filledCondition(when: MitigationWhen, attributes: Readonly<Record<string, string>>): MitigationCondition {
  return when.action === undefined ? when : { ...when, action: fillTextOrKeep(when.action, attributes) };
}

function renderMitigation(
  template: MitigationTemplate,
  attributes: Readonly<Record<string, string>>,
  context: MitigationContext,
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
    if (template.silence !== undefined) {
      const silence = silenceAction(template.silence, attributes, context.time, mitigation.customName ?? mitigation.toolName);
      if (silence === undefined) return undefined;
      mitigation.action = silence;
      const base = template.silence.dataSource === undefined ? undefined : context.alertmanagerUrl(template.silence.dataSource);
      if (base !== undefined) mitigation.url = silenceFormUrl(base, silence.matchers);
    }
    return mitigation;
  } catch (error) {
    if (error instanceof MissingAttributesError || error instanceof UnsafeValueError) return undefined;
    throw error;
  }
}
