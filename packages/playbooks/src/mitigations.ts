import { mitigationFits, type Ranking } from "@pes/analysis";
import type { ActionableMitigation, MitigationCondition } from "@pes/contracts";
import { asText, fillTemplate, fillTemplates, fillTextOrKeep, fillUrlTemplate, MissingAttributesError, UnsafeValueError } from "@pes/templates";
import type { DataSourceMitigationLinks } from "@pes/connectors/schemas";
import { silenceAction } from "./alertmanager-silence.js";
import { gadgetInstances, instanceAttributes } from "./gadget-upstreams.js";
import type { MitigationTemplate, MitigationWhen } from "./playbook-definition.js";

/** What the mitigations of one execution are rendered against. */
export interface MitigationContext extends RenderingContext {
  /** What the analysis made of the findings: each template's `when` is checked against it. */
  ranking: Ranking;
}

/** What a mitigation is filled with, whatever the findings. */
export interface RenderingContext {
  /** The issue time: `when.change` counts the changes before it, and a silence starts then. */
  time: Date;
  /** The mitigation links the organization's data source of this name offers (its connector's), if it has one. */
  mitigationLinks(dataSource: string): DataSourceMitigationLinks | undefined;
}

/** A mitigation rendered for one issue, before the findings decide whether it is offered. */
export interface RenderedMitigation {
  mitigation: ActionableMitigation;
  /** Its `when`, its action's title filled as the engine fills titles; absent: always offered. */
  when?: MitigationCondition;
  /** The data source whose silence form `mitigation.url` is, when it is one. */
  silenceForm?: string;
}

/**
 * Renders a playbook's mitigation templates for one execution: those whose `when` the findings meet,
 * filled with the attributes (renderMitigationTemplates, then offeredMitigations).
 */
export function renderMitigations(
  templates: readonly MitigationTemplate[],
  attributes: Readonly<Record<string, string>>,
  context: MitigationContext,
): ActionableMitigation[] {
  return offeredMitigations(renderMitigationTemplates(templates, attributes, context), context.ranking, context.time);
}

/**
 * Renders a playbook's mitigation templates for one issue, whatever the findings, in the playbook's order:
 *
 * - `toolName` and `customName` are text; `url` is the playbook's own URL with each value URL-encoded as
 *   one component (fillUrlTemplate), so a value cannot change the scheme, host or path structure; `action`
 *   is JSON whose string leaves are filled as text. An action is data for whoever runs it: a value lands
 *   inside one JSON string, never spliced into a shell command line.
 * - `silence` becomes the action: an Alertmanager API v2 silence with exact matchers, from the issue time
 *   for its duration (the same findings give the same result); with a data source, `url` is its silence
 *   form with the same matchers, as its connector links to it (an Alertmanager's).
 * - A mitigation with `upstreams` is rendered once per upstream, `{{upstream}}` bound to its name, in the
 *   order of its list (none when the issue has no list).
 * - A mitigation that needs an attribute the issue does not have, or whose URL would take a value it
 *   refuses (a dot segment such as `..`, which would point the URL at another path), is left out: it
 *   cannot be carried out as written, and the other mitigations still are.
 *
 * Rendering reads no finding: an evidence bundle keeps what this gives, and a replay offers the same
 * mitigations by the same `when` (offeredMitigations).
 */
export function renderMitigationTemplates(
  templates: readonly MitigationTemplate[],
  attributes: Readonly<Record<string, string>>,
  context: RenderingContext,
): RenderedMitigation[] {
  return templates.flatMap((template) =>
    gadgetInstances(template, attributes).flatMap((instance) => {
      const bound = instanceAttributes(attributes, instance);
      const rendered = renderMitigation(template, bound, context);
      if (rendered === undefined) return [];
      return [{ ...rendered, ...(template.when === undefined ? {} : { when: filledCondition(template.when, bound) }) }];
    }),
  );
}

/** The rendered mitigations whose `when` the findings meet (mitigationFits), in order. */
export function offeredMitigations(rendered: readonly RenderedMitigation[], ranking: Ranking, time: Date): ActionableMitigation[] {
  return rendered.filter(({ when }) => when === undefined || mitigationFits(when, ranking, time)).map(({ mitigation }) => mitigation);
}

/** A mitigation's `when` with its action's title filled (a missing attribute kept as written: titles are prose). */
export function filledCondition(when: MitigationWhen, attributes: Readonly<Record<string, string>>): MitigationCondition {
  return when.action === undefined ? when : { ...when, action: fillTextOrKeep(when.action, attributes) };
}

function renderMitigation(
  template: MitigationTemplate,
  attributes: Readonly<Record<string, string>>,
  context: RenderingContext,
): Omit<RenderedMitigation, "when"> | undefined {
  try {
    const mitigation: ActionableMitigation = { toolName: fillTemplate(template.toolName, attributes, asText) };
    if (template.customName !== undefined) mitigation.customName = fillTemplate(template.customName, attributes, asText);
    if (template.url !== undefined) mitigation.url = fillUrlTemplate(template.url, attributes);
    if (template.action !== undefined) {
      mitigation.action = Object.fromEntries(Object.entries(template.action).map(([key, value]) => [key, fillTemplates(value, attributes, asText)]));
    }
    if (template.silence === undefined) return { mitigation };
    const silence = silenceAction(template.silence, attributes, context.time, mitigation.customName ?? mitigation.toolName);
    if (silence === undefined) return undefined;
    mitigation.action = silence;
    const { dataSource } = template.silence;
    const form = dataSource === undefined ? undefined : context.mitigationLinks(dataSource)?.silence?.(silence.matchers);
    if (dataSource === undefined || form === undefined) return { mitigation };
    mitigation.url = form;
    return { mitigation, silenceForm: dataSource };
  } catch (error) {
    if (error instanceof MissingAttributesError || error instanceof UnsafeValueError) return undefined;
    throw error;
  }
}
