import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { EvidenceBundle, type ExpectedVerdict, type Observation } from "@pes/contracts";
import { memoryLeak } from "./data/memory-leak.js";
import { BUNDLES_DIR } from "./evidence-bundles.js";
import { withRangeAnswer } from "./scenario-bundles.js";

/**
 * The scenarios' incidents as other playbooks would ask about them: a committed bundle with some of its
 * answers taken from the scenario's own data by another query (scenario-bundles.ts), and the verdict
 * that incident calls for. Each is held to it, and to the same invariance as the committed bundles.
 */
export interface BundleVariant {
  name: string;
  /** What the variant changes, and why the verdict should not. */
  about: string;
  build(): Promise<EvidenceBundle>;
  expected: ExpectedVerdict;
}

/** The bundle with alerts added to an Alertmanager action's answer. */
function withAlerts(
  bundle: EvidenceBundle,
  title: string,
  alerts: ReadonlyArray<{ labels: Record<string, string>; startsAt: string; endsAt: string }>,
): EvidenceBundle {
  return {
    ...bundle,
    actions: bundle.actions.map((action) => {
      const observation = action.observation as Observation;
      if (action.title !== title || observation.kind !== "alertmanager") return action;
      return { ...action, observation: { ...observation, alerts: [...observation.alerts, ...alerts] } };
    }),
  };
}

/** The bundle with each label set of one action's answer (series or alerts) rewritten by `relabel`. */
function relabeled(bundle: EvidenceBundle, title: string, relabel: (labels: Record<string, string>) => Record<string, string>): EvidenceBundle {
  return {
    ...bundle,
    actions: bundle.actions.map((action) => {
      const observation = action.observation as Observation;
      if (action.title !== title) return action;
      if (observation.kind === "alertmanager")
        return { ...action, observation: { ...observation, alerts: observation.alerts.map((alert) => ({ ...alert, labels: relabel(alert.labels) })) } };
      if (observation.kind === "prometheus" && observation.data.resultType === "matrix") {
        const result = [...observation.data.result].map((series) => ({ ...series, metric: relabel(series.metric) }));
        return { ...action, observation: { ...observation, data: { ...observation.data, result } } };
      }
      return action;
    }),
  };
}

/** node-exporter's way: a node's series and alerts name it by its target (`instance`, host and port), not by a `node` label. */
function byInstance({ node, ...labels }: Record<string, string>): Record<string, string> {
  return node === undefined ? labels : { ...labels, instance: labels.instance ?? `${node}:9100` };
}

/** An instant `minutes` from the bundle's issue time, as ISO 8601. */
function fromIssue(bundle: EvidenceBundle, minutes: number): string {
  return new Date(Date.parse(bundle.issue.time) + minutes * 60_000).toISOString();
}

async function committed(name: string): Promise<EvidenceBundle> {
  return EvidenceBundle.parse(JSON.parse(await readFile(join(BUNDLES_DIR, `${name}.bundle.json`), "utf8")));
}

export const BUNDLE_VARIANTS: readonly BundleVariant[] = [
  {
    name: "memory-leak, each pod's series",
    about:
      "search's memory asked pod by pod rather than as the fullest pod: over the look-back the old release's pods stop and the leaking ones start, and the one still climbing to its limit dates the leak at the release",
    async build() {
      const bundle = await committed("memory-leak");
      const { series } = memoryLeak(new Date(bundle.issue.time)).data;
      return withRangeAnswer(
        bundle,
        "Memory of search's pods",
        series,
        { name: "container_memory_working_set_bytes", labels: { namespace: "shop", container: "search" } },
        { name: "kube_pod_container_resource_limits", labels: { namespace: "shop", container: "search", resource: "memory" } },
      );
    },
    expected: {
      conclusion: "cause",
      cause: { kind: "deploy", subject: "search", action: "Rollouts of search" },
      mitigations: ["Memory dashboard of search", "Roll back search", "Silence memory alerts of search for 1h"],
    },
  },
  {
    name: "healthy, paged all the same",
    about:
      "checkout's error-rate alert fires (what paged) and nothing else is abnormal: the page is what the issue says, not a finding, so no cause was found (and the page may be silenced while someone looks)",
    async build() {
      const bundle = await committed("healthy");
      return withAlerts(bundle, "Alerts firing for checkout", [
        {
          labels: { alertname: "CheckoutHighErrorRate", namespace: "shop", service: "checkout", severity: "critical" },
          startsAt: fromIssue(bundle, -4),
          endsAt: fromIssue(bundle, 240),
        },
      ]);
    },
    expected: { conclusion: "no-cause", mitigations: ["Service dashboard of checkout", "Silence alerts of checkout for 2h"] },
  },
  {
    name: "slow-node, the node's series and alerts by instance",
    about:
      "the node's I/O wait and its NodeDiskIOSaturation alert name it as node-exporter does, by its target (instance=node-2:9100), not by a node label: only catalog's pods on node-2 are slow, and node-2 itself alerts",
    async build() {
      const bundle = await committed("slow-node");
      return relabeled(relabeled(bundle, "I/O wait per node", byInstance), "Alerts firing for the nodes", byInstance);
    },
    expected: {
      conclusion: "cause",
      cause: { kind: "node", subject: "node/node-2", action: "I/O wait per node" },
      mitigations: ["Latency by node of catalog", "Cordon the slow node", "Move the pods off the slow node", "Limit the pod crowding the slow node"],
    },
  },
];
