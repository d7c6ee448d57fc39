import { fillTemplate, placeholdersIn, UnsafeValueError } from "@pes/templates";
import type { TemplateEncoding } from "../connector-definition.js";

/** RFC 1123 label, as Kubernetes names namespaces: lower-case alphanumerics and `-`, at most 63. */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** RFC 1123 subdomain, as Kubernetes names most objects (Deployments, Pods): labels joined by `.`, at most 253. */
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A label value: empty, or alphanumerics at both ends and `-`, `_`, `.` between, at most 63. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** A label key: an optional DNS subdomain prefix and `/`, then a name like a value's (not empty). */
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

export function isNamespaceName(text: string): boolean {
  return text.length <= 63 && DNS1123_LABEL.test(text);
}

export function isObjectName(text: string): boolean {
  return text.length <= 253 && DNS1123_SUBDOMAIN.test(text);
}

export function isLabelValue(text: string): boolean {
  return text.length <= 63 && LABEL_VALUE.test(text);
}

export function isLabelKey(text: string): boolean {
  const slash = text.lastIndexOf("/");
  const prefix = slash === -1 ? undefined : text.slice(0, slash);
  const name = text.slice(slash + 1);
  return (prefix === undefined || isObjectName(prefix)) && name.length <= 63 && LABEL_NAME.test(name);
}

/**
 * A template whose filled text must be a valid Kubernetes name or label value: a value that would make
 * it anything else (a `/`, a `,`, `=`, `..`, a quote, a newline) is refused before any request, never
 * escaped into a different name. The filled text is also URL-encoded where it is sent.
 */
function validatedTemplate(what: string, valid: (text: string) => boolean, rule: string): TemplateEncoding {
  return {
    target: `kubernetes ${what}`,
    fill: (template, attributes) => {
      const filled = fillTemplate(template, attributes, (value) => value);
      if (!valid(filled)) throw new UnsafeValueError(`${JSON.stringify(filled)} is not a Kubernetes ${what} (${rule})`);
      return filled;
    },
  };
}

export const namespaceTemplate = validatedTemplate("namespace", isNamespaceName, "a DNS-1123 label: a-z, 0-9 and -, at most 63");
export const objectNameTemplate = validatedTemplate("object name", isObjectName, "a DNS-1123 subdomain: a-z, 0-9, - and ., at most 253");
export const labelValueTemplate = validatedTemplate("label value", isLabelValue, "A-Z, a-z, 0-9, -, _ and ., alphanumeric at both ends, at most 63");

/** Whether a template with no placeholder is already what `valid` wants (checked when configuration loads). */
export function literalIsValid(template: string, valid: (text: string) => boolean): boolean {
  return placeholdersIn(template).length > 0 || valid(template);
}
