import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { replayBundle } from "@pes/analysis";
import { EvidenceBundle, type KubernetesStateObservation } from "@pes/contracts";
import { afterAll, describe, expect, it } from "vitest";
import { writeSyntheticCase } from "../testing/synthetic-case.js";
import { convertCase } from "./case-bundle.js";

const root = mkdtempSync(join(tmpdir(), "cloud-opsbench-case-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function converted() {
  const directory = join(root, "case");
  writeSyntheticCase(directory);
  return convertCase(directory, "cloud-opsbench/shop/scheduling/1");
}

function stateOf(bundle: EvidenceBundle): KubernetesStateObservation {
  const observation = bundle.actions[0]?.observation;
  if (observation?.kind !== "kubernetes-state") throw new Error("no state");
  return observation as KubernetesStateObservation;
}

describe("a case directory as a bundle", () => {
  const { bundle, notes } = converted();
  const state = stateOf(bundle);

  it("is a valid bundle of the cluster state, the alerts and one action per metric series, paged when the first alert fired", () => {
    expect(notes).toEqual([]);
    expect(EvidenceBundle.safeParse(JSON.parse(JSON.stringify(bundle))).success).toBe(true);
    expect(bundle.issue).toEqual({
      bookName: "cloud-opsbench",
      title: "Checkout is down.",
      time: "2026-03-02T08:57:00.000Z",
      attributes: { namespace: "shop" },
    });
    expect(bundle.actions.map((action) => [action.title, action.connector, action.observation.kind])).toEqual([
      ["Cluster state", "kubernetes", "kubernetes-state"],
      ["Alerts", "alertmanager", "alertmanager"],
      ["Metrics of cart: cpu", "prometheus", "prometheus"],
      ["Metrics of cart: mem", "prometheus", "prometheus"],
      ["Metrics of cart: p90latency", "prometheus", "prometheus"],
      ["Metrics of node-b: tcp_retans", "prometheus", "prometheus"],
    ]);
    expect(bundle.actions[2]?.window).toEqual({ start: "2026-03-02T08:56:00.000Z", time: "2026-03-02T08:57:00.000Z", end: "2026-03-02T09:00:00.123Z" });
  });

  it("takes the namespace and every name from the case", () => {
    expect(state.namespace).toBe("shop");
    expect(state.pods?.map((pod) => pod.metadata.name).sort()).toEqual(["cart-7c9d8b6f5a-q8w2e", "checkout-5d8f7c9b6d-x2k4p", "checkout-6b7c8d9e0f-old99"]);
    expect(state.nodes?.map((node) => node.metadata.name).sort()).toEqual(["node-a", "node-b"]);
    expect(state.serviceAccounts).toEqual(["checkout", "default"]);
  });

  it("gives a pod of the current ReplicaSet its template's affinity and pull secrets, and its scheduling message", () => {
    const pending = state.pods?.find((pod) => pod.metadata.name === "checkout-5d8f7c9b6d-x2k4p");
    expect(pending?.spec?.affinity?.nodeAffinity).toBeDefined();
    expect(pending?.spec?.imagePullSecrets).toEqual([{ name: "registry-creds" }]);
    expect(pending?.spec?.containers[0]?.ports).toEqual([{ name: "http", containerPort: 8080, protocol: "TCP" }]);
    expect(pending?.status?.conditions).toEqual([
      { type: "PodScheduled", status: "False", reason: "Unschedulable", message: expect.stringContaining("untolerated taint {gpu: true}") },
    ]);
    const old = state.pods?.find((pod) => pod.metadata.name === "checkout-6b7c8d9e0f-old99");
    expect(old?.spec?.affinity).toBeUndefined();
  });

  it("keeps the manifest's spec with the table's status, and leaves out what the API does not list", () => {
    const checkout = state.deployments?.find((deployment) => deployment.metadata.name === "checkout");
    expect(checkout?.spec.template.spec.tolerations).toEqual([{ key: "dedicated", operator: "Equal", value: "batch", effect: "NoSchedule" }]);
    expect(checkout?.status).toMatchObject({ replicas: 2, readyReplicas: 0, unavailableReplicas: 2 });
    expect(state.services?.map((service) => service.metadata.name)).toEqual(["cart", "checkout"]);
    expect(state.endpointSlices?.[0]?.endpoints?.map((endpoint) => endpoint.targetRef?.name)).toEqual(["cart-7c9d8b6f5a-q8w2e", "checkout-6b7c8d9e0f-old99"]);
    expect(state.persistentVolumeClaims?.[0]?.spec?.selector).toEqual({ matchLabels: { tier: "cache" } });
  });

  it("merges the events of the listings and of the describes, a node's once", () => {
    const reasons = state.events?.map((event) => event.reason) ?? [];
    expect(reasons.filter((reason) => reason === "FailedScheduling")).toHaveLength(1);
    expect(reasons.filter((reason) => reason === "NodeNotReady")).toHaveLength(1);
    expect(reasons.filter((reason) => reason === "FailedCreate")).toHaveLength(1);
    expect(reasons).toContain("ProvisioningFailed");
  });

  it("stands node services for kube-system pods, and files logs under the app's pod", () => {
    expect(state.systemPods?.map((pod) => [pod.metadata.name, pod.status?.phase])).toEqual([
      ["kubelet-node-b", "Failed"],
      ["containerd-node-a", "Running"],
    ]);
    expect(state.containerLogs?.map((log) => [log.pod, log.container])).toEqual([
      ["kubelet-node-b", "kubelet"],
      ["cart-7c9d8b6f5a-q8w2e", "server"],
      ["ghost", "ghost"],
    ]);
  });

  it("leaves the node services out when only what the API shows is asked for", () => {
    const directory = join(root, "api-only");
    writeSyntheticCase(directory);
    const apiOnly = stateOf(convertCase(directory, "cloud-opsbench/shop/scheduling/1", { apiOnly: true }).bundle);
    expect(apiOnly.systemPods ?? []).toEqual([]);
    expect(apiOnly.containerLogs?.map((log) => log.pod)).toEqual(["cart-7c9d8b6f5a-q8w2e", "ghost"]);
  });

  it("replays through the analysis", () => {
    expect(replayBundle(bundle).verdict.conclusion).toMatch(/^(cause|no-cause|ambiguous)$/);
  });
});

describe("a case with nothing in it", () => {
  it("converts to a bundle with an empty state rather than failing", () => {
    const directory = join(root, "empty");
    const { bundle, notes } = convertCase(directory, "empty");
    expect(bundle.actions).toHaveLength(1);
    expect(stateOf(bundle).pods).toEqual([]);
    expect(notes).toEqual(["no collection_timestamp: the epoch stands for it"]);
  });
});
