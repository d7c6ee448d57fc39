import { connectorRegistry, type ConnectorRegistry, type DataSource } from "@pes/connectors/schemas";
import { monitorNamePlaceholders, monitorNameProblem, monitorNameShape, templatesOf, UPSTREAM_PLACEHOLDER, type PlaybookDefinition } from "@pes/playbooks";
import { fillUrlTemplate, placeholdersIn, UnsafeValueError } from "@pes/templates";
import type { FieldProblem } from "./schema-problems.js";

/** A playbook that passed its schema, with the file it came from. */
export interface LoadedPlaybook {
  file: string;
  definition: PlaybookDefinition;
}

export interface PlaybookProblem extends FieldProblem {
  file: string;
}

/**
 * A gadget's upstreams: `by` names an attribute of the playbook, `upstream` is not also an attribute (the
 * binding would hide it), and the gadget's and its actions' titles name `{{upstream}}`, so that each
 * instance's findings cite an action of their own. A mitigation's upstreams: `by` names an attribute, and
 * its name names `{{upstream}}`.
 */
function checkUpstreams(definition: PlaybookDefinition, known: ReadonlySet<string>, report: (path: PropertyKey[], message: string) => void): void {
  const placeholder = `{{${UPSTREAM_PLACEHOLDER}}}`;
  const names = (template: string) => placeholdersIn(template).some(({ name }) => name === UPSTREAM_PLACEHOLDER);
  definition.gadgets.forEach((gadget, g) => {
    const { upstreams } = gadget;
    if (upstreams === undefined) return;
    if (known.has(UPSTREAM_PLACEHOLDER)) {
      report(["gadgets", g, "upstreams"], `"${UPSTREAM_PLACEHOLDER}" is an attribute of this playbook: a gadget's upstreams would hide it`);
    }
    if (!Array.isArray(upstreams) && !known.has(upstreams.by)) {
      report(["gadgets", g, "upstreams", "by"], `"${upstreams.by}" is not an attribute of this playbook (known: ${[...known].sort().join(", ") || "none"})`);
    }
    if (!names(gadget.title))
      report(["gadgets", g, "title"], `a gadget with upstreams names ${placeholder} in its title, so that its instances are told apart`);
    gadget.actions.forEach((action, a) => {
      if (!names(action.title)) {
        report(
          ["gadgets", g, "actions", a, "title"],
          `an action of a gadget with upstreams names ${placeholder} in its title, so that each upstream's findings cite their own action`,
        );
      }
    });
  });
  definition.mitigations.forEach((mitigation, m) => {
    const { upstreams } = mitigation;
    if (upstreams === undefined) return;
    if (!Array.isArray(upstreams) && !known.has(upstreams.by)) {
      report(
        ["mitigations", m, "upstreams", "by"],
        `"${upstreams.by}" is not an attribute of this playbook (known: ${[...known].sort().join(", ") || "none"})`,
      );
    }
    if (!names(mitigation.customName ?? mitigation.toolName)) {
      report(["mitigations", m, "customName"], `a mitigation with upstreams names ${placeholder} in its name, so that each upstream's is told apart`);
    }
  });
}

/** A URL template must fix scheme and host before its first placeholder. */
const LITERAL_ORIGIN = /^https?:\/\/[^/?#{}]+[/?#]/;
/** Stands for a data source's URL when a path under it (an http action's) is tried at load time. */
const SAMPLE_BASE = "http://data-source.invalid/base";

/**
 * The checks that need more than one playbook file's schema: data sources exist in the organization and
 * have the action's type, names and monitor names do not collide, every placeholder is an attribute the
 * playbook declares, filters are used where they mean something, and URL templates fix their host and
 * path (what the worker checks on every filled URL: a template that fails it would fail every run).
 * Which fields are templates, their filters and URL rules come from the encodings the connectors declare.
 */
export function checkPlaybooks(
  playbooks: readonly LoadedPlaybook[],
  organizationFile: string,
  dataSources: ReadonlyMap<string, DataSource>,
  connectors: ConnectorRegistry = connectorRegistry,
): PlaybookProblem[] {
  const problems: PlaybookProblem[] = [];
  const names = new Map<string, string>();
  const shapes = new Map<string, string>();

  for (const { file, definition } of playbooks) {
    const report = (path: PropertyKey[], message: string): void => {
      problems.push({ file, path, message });
    };

    const nameKey = definition.name.toLowerCase();
    const sameName = names.get(nameKey);
    if (sameName === undefined) {
      names.set(nameKey, file);
    } else {
      report(["name"], `playbook name "${definition.name}" is already used in ${sameName} (names are compared ignoring case)`);
    }

    definition.monitorNames.forEach((monitorName, index) => {
      const path = ["monitorNames", index];
      const problem = monitorNameProblem(monitorName);
      if (problem !== undefined) {
        report(path, problem);
        return;
      }
      const shape = monitorNameShape(monitorName);
      const other = shapes.get(shape);
      if (other === undefined) {
        shapes.set(shape, `${file} at monitorNames.${index}`);
      } else {
        report(path, `monitor name "${monitorName}" matches the same titles as the one in ${other}`);
      }
    });

    const required = definition.requiredAttributes ?? [];
    const optional = definition.optionalAttributes ?? [];
    for (const name of optional.filter((name) => required.includes(name))) {
      report(["optionalAttributes"], `attribute "${name}" is both required and optional`);
    }
    const captured = definition.monitorNames.flatMap(monitorNamePlaceholders);
    const known = new Set([...required, ...optional, ...captured]);
    checkUpstreams(definition, known, report);
    // `{{upstream}}` is bound in the gadgets and mitigations that declare upstreams, and only there.
    const bindsUpstream = (path: readonly PropertyKey[]) =>
      typeof path[1] === "number" &&
      ((path[0] === "gadgets" && definition.gadgets[path[1]]?.upstreams !== undefined) ||
        (path[0] === "mitigations" && definition.mitigations[path[1]]?.upstreams !== undefined));

    for (const { path, template, encoding, placeholders } of templatesOf(definition, connectors)) {
      for (const placeholder of placeholders) {
        const written = `{{${placeholder.name}${placeholder.filter === undefined ? "" : `|${placeholder.filter}`}}}`;
        if (placeholder.name === UPSTREAM_PLACEHOLDER && !known.has(placeholder.name)) {
          if (!bindsUpstream(path)) report(path, `placeholder ${written} is bound only in a gadget or a mitigation that declares upstreams`);
        } else if (!known.has(placeholder.name)) {
          report(
            path,
            `placeholder ${written} is not an attribute of this playbook: add it to requiredAttributes or ` +
              `optionalAttributes, or capture it in a monitor name (known: ${[...known].sort().join(", ") || "none"})`,
          );
        }
        if (placeholder.filter === undefined) continue;
        const filters = encoding.filters?.names ?? [];
        if (filters.length === 0) {
          report(path, `placeholder ${written}: ${filterPlaces(connectors)}`);
        } else if (!filters.includes(placeholder.filter)) {
          report(path, `placeholder ${written}: unknown filter (known: ${filters.join(", ")})`);
        }
      }
      const problem = encoding.problem?.(template);
      if (problem !== undefined) report(path, problem);
      // A path appended to the data source's URL (an http action's) need not fix a host: full URLs must.
      const underDataSource = encoding.url === "under-data-source";
      if (encoding.url !== undefined) {
        const problem = underDataSource ? undefined : urlTemplateProblem(template, placeholders.length > 0);
        if (problem !== undefined) report(path, problem);
        else if (leavesItsFixedPath(template, placeholders, underDataSource)) {
          report(
            path,
            underDataSource
              ? "must stay under the data source's URL: a .. segment takes the request above it"
              : "a .. segment after the first placeholder takes the URL out of the path before it",
          );
        }
      }
    }

    const titles = new Set(definition.gadgets.flatMap((gadget) => gadget.actions.map((action) => action.title)));
    definition.mitigations.forEach((mitigation, m) => {
      const title = mitigation.when?.action;
      if (title !== undefined && !titles.has(title)) {
        report(["mitigations", m, "when", "action"], `"${title}" is not the title of an action of this playbook (write it as the action's title is written)`);
      }
      const name = mitigation.silence?.dataSource;
      if (name === undefined) return;
      const type = dataSources.get(name)?.type;
      // The types whose connector links to a silence form (ConnectorDefinition.mitigationLinks).
      const offering = connectors.typesOffering("silence");
      if (type === undefined || !offering.includes(type)) {
        report(
          ["mitigations", m, "silence", "dataSource"],
          type === undefined
            ? `data source "${name}" is not defined in ${organizationFile}`
            : `data source "${name}" is of type ${type}, not ${offering.join(" or ") || "one whose connector offers a silence form"}`,
        );
      }
    });

    definition.gadgets.forEach((gadget, g) => {
      gadget.actions.forEach((action, a) => {
        const path = ["gadgets", g, "actions", a, "dataSource"];
        const dataSource = dataSources.get(action.dataSource);
        const queryKey = connectors.connectorOf(action)?.type;
        if (dataSource === undefined) {
          const defined = [...dataSources.keys()].sort().join(", ") || "none";
          report(path, `data source "${action.dataSource}" is not defined in ${organizationFile} (defined: ${defined})`);
        } else if (dataSource.type !== queryKey) {
          report(path, `data source "${action.dataSource}" is of type ${dataSource.type}, but the action's query key is ${queryKey}`);
        }
      });
    });
  }
  return problems;
}

/**
 * Whether a URL template's own text leaves the part it fixes (`/{{service}}/../../x`), which the
 * connector and the mitigations refuse at run time whatever the values: tried with a plain value.
 */
function leavesItsFixedPath(template: string, placeholders: readonly { name: string }[], underDataSource: boolean): boolean {
  const sample = Object.fromEntries(placeholders.map(({ name }) => [name, "x"]));
  try {
    fillUrlTemplate(template, sample, underDataSource ? SAMPLE_BASE : "");
    return false;
  } catch (error) {
    if (error instanceof UnsafeValueError) return true;
    throw error;
  }
}

/** Where filters apply, for a placeholder that has one where none does. */
function filterPlaces(connectors: ConnectorRegistry): string {
  const places = connectors.filterPlaces;
  return places.length === 0 ? "no template takes filters" : `filters apply only in ${places.join(" and ")}`;
}

/** Why a URL template could send a value somewhere else than the playbook's author meant, if it could. */
function urlTemplateProblem(template: string, hasPlaceholders: boolean): string | undefined {
  const valid = hasPlaceholders ? LITERAL_ORIGIN.test(template.slice(0, template.indexOf("{{"))) : isHttpUrl(template);
  return valid ? undefined : "must be an absolute http(s) URL whose scheme and host come before any placeholder, so a value cannot change where it points";
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}
