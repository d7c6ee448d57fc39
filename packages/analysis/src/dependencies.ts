import type { AlertEvidence, Labels, SymptomEvidence } from "./evidence.js";

/**
 * Services the paged one depends on, and the page itself: what the evidence says of other services.
 * The playbook declares a service's upstreams (a gadget's `upstreams`), each instance's findings carry
 * the upstream they are about; here other evidence is recognised as about an upstream (an alert firing
 * for one, a log pattern naming one), and the alert that paged is told from the alerts that explain it.
 */

/** What the analysis knows of the issue beyond the findings. */
export interface IssueScope {
  /** The issue's attributes (`service=checkout`): what was paged. */
  attributes?: Labels;
  /** The services the paged one calls, as the playbook declares them for this issue. */
  upstreams?: readonly string[];
}

/**
 * Whether an alert is the page, or one of its kind: it fires for what the issue is about. Each of the
 * issue's attributes the alert carries as a label (its name as `alertname`) has the issue's value, and
 * it carries at least one. Such an alert says the paged service is unwell, which the issue already says:
 * it is a symptom, never the cause (its condition held before it fired; what made it hold is the cause).
 */
export function isPage(alert: AlertEvidence, attributes: Labels | undefined): boolean {
  if (attributes === undefined || alert.labels === undefined) return false;
  const labels: Labels = { ...alert.labels, alertname: alert.name };
  const shared = Object.keys(attributes).filter((name) => Object.hasOwn(labels, name));
  return shared.length > 0 && shared.every((name) => labels[name] === attributes[name]);
}

/**
 * The upstream a symptom is about, when the playbook did not say (its gadget is not an upstream's): an
 * alert firing for a declared upstream, by a label the issue names the paged service with
 * (`service=orders` when `service=checkout` was paged).
 */
export function alertUpstream(evidence: SymptomEvidence, scope: IssueScope): string | undefined {
  if (evidence.kind !== "alert" || evidence.labels === undefined || scope.attributes === undefined) return undefined;
  const upstreams = new Set(scope.upstreams ?? []);
  for (const name of Object.keys(scope.attributes)) {
    const value = evidence.labels[name];
    if (value !== undefined && value !== scope.attributes[name] && upstreams.has(value)) return value;
  }
  return undefined;
}

/**
 * The declared upstreams a text names as a word of its own (`upstream=orders`, `orders answered 503`,
 * `http://orders.shop.svc`), not as part of another name (`orders-db`, `reorders`).
 */
export function upstreamsNamedIn(text: string, upstreams: readonly string[]): string[] {
  return upstreams.filter((name) => new RegExp(`(?<![A-Za-z0-9_-])${escapeRegex(name)}(?![A-Za-z0-9_-])`).test(text));
}

/** The texts of a symptom that may name another service: a log pattern and its example line. */
export function namingTexts(evidence: SymptomEvidence): string[] {
  return evidence.kind === "log-pattern" ? [evidence.pattern, ...(evidence.example === undefined ? [] : [evidence.example])] : [];
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
