import type { Pod } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { failureKindOf } from "./container-failures.js";
import { symptomLevel, symptomMovement } from "./evidence-text.js";
import type { EventEvidence } from "./evidence.js";
import { podFindings } from "./kubernetes-reading.js";
import type { Finding } from "./ranking.js";
import { judgeExecution } from "./verdict.js";

const window = { start: new Date("2024-11-18T07:21:00Z"), time: new Date("2024-11-18T08:22:31Z"), end: new Date("2024-11-18T08:23:00Z") };

// Messages of HolmesGPT's recorded cases (test/scenarios/bundles/holmesgpt) and of the kubelet's usual wording.
describe("failureKindOf", () => {
  it("names why an image could not be pulled, from the kubelet's message", () => {
    expect(
      failureKindOf(
        "Failed",
        'Failed to pull image "yourcompany/crw:latest": failed to pull and unpack image "docker.io/yourcompany/crw:latest": failed to resolve reference "docker.io/yourcompany/crw:latest": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed',
      ),
    ).toBe("image-pull/not-found");
    expect(
      failureKindOf(
        "Failed",
        'Failed to pull image "registry.example/shop/checkout:v9": rpc error: code = NotFound desc = failed to pull and unpack image: not found',
      ),
    ).toBe("image-pull/not-found");
    expect(failureKindOf("Failed", 'Failed to pull image "registry.example/shop/checkout:v2": unexpected status from HEAD request: 401 Unauthorized')).toBe(
      "image-pull/unauthorized",
    );
    expect(
      failureKindOf("Failed", 'Failed to pull image "registry.example/shop/checkout:v2": dial tcp: lookup registry.example on 10.96.0.10:53: no such host'),
    ).toBe("image-pull/dns");
    expect(failureKindOf("Failed", 'Failed to pull image "registry.example/shop/checkout:v2": context deadline exceeded')).toBe("image-pull/failed");
    // A container's waiting status words it as containerd does.
    expect(
      failureKindOf(
        "ErrImagePull",
        'rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/yourcompany/crw:latest": failed to resolve reference "docker.io/yourcompany/crw:latest": pull access denied, repository does not exist or may require authorization',
      ),
    ).toBe("image-pull/not-found");
  });

  it("names why a container could not start", () => {
    expect(
      failureKindOf(
        "Failed",
        'Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "wge": executable file not found in $PATH: unknown',
      ),
    ).toBe("start/command-not-found");
    expect(failureKindOf("Failed", 'Error: configmap "checkout-config" not found')).toBe("start/config");
    expect(failureKindOf("CreateContainerConfigError", 'secret "db-password" not found')).toBe("start/config");
  });

  it("names nothing for the kubelet's words that only say a pull failed, not why", () => {
    for (const message of ["Error: ErrImagePull", "Error: ImagePullBackOff", 'Back-off pulling image "yourcompany/crw:latest"', "Started container checkout"]) {
      expect(failureKindOf("Failed", message)).toBeUndefined();
    }
  });
});

describe("a pod that never started", () => {
  const waiting: Pod = {
    metadata: { name: "customer-relations-webapp-5d98ffcfd-tz4nc" },
    status: {
      phase: "Pending",
      startTime: "2024-11-18T08:21:31Z",
      containerStatuses: [
        { name: "crw-main-container", restartCount: 0, state: { waiting: { reason: "ErrImagePull", message: 'failed to pull "yourcompany/crw:latest"' } } },
      ],
    },
  };

  // 04_image_pull_backoff: read as "Restarted pods: none", normal.
  it("reads as not started, its waiting reason quoted, not as a pod that did not restart", () => {
    expect(podFindings([waiting], undefined, window, { action: "Pods" })).toEqual([
      {
        kind: "event",
        action: "Pods",
        subject: "pod/customer-relations-webapp-5d98ffcfd-tz4nc",
        reason: "ErrImagePull",
        container: "crw-main-container",
        message: 'container crw-main-container not started: ErrImagePull: failed to pull "yourcompany/crw:latest"',
        warning: true,
        onset: new Date("2024-11-18T08:21:31Z"),
      },
    ]);
    // Being created, or waiting for its init containers, is no fault.
    const creating: Pod = {
      ...waiting,
      status: { ...waiting.status, containerStatuses: [{ name: "web", restartCount: 0, state: { waiting: { reason: "ContainerCreating" } } }] },
    };
    expect(podFindings([creating], undefined, window, { action: "Pods" })).toEqual([]);
  });

  // 12_KubePodNotReady: a pod no node could take.
  it("reads a pod the scheduler could not place as unschedulable", () => {
    const pending: Pod = {
      metadata: { name: "user-profile-resources-659d4dd659-cq4kq" },
      status: {
        phase: "Pending",
        conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/1 nodes are available: 1 Insufficient nvidia.com/gpu." }],
      },
    };
    const [found] = podFindings([pending], undefined, window, { action: "Pods" });
    expect(found).toMatchObject({ kind: "event", reason: "Unschedulable", message: "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.", warning: true });
  });
});

describe("an event's message in the verdict", () => {
  const event = (reason: string, message: string, clock: string): Finding<EventEvidence> => ({
    gadget: "Events",
    evidence: { kind: "event", action: "Events", subject: "pod/logging-agent", reason, message, warning: true, onset: new Date(`2025-01-27T06:${clock}Z`) },
  });

  // 02_crashloop_backoff: the cause was a deploy; the decisive message was nowhere in the verdict.
  it("is the cause's detail, and the start failure is the cause of the crash loop it set off", () => {
    const failed = event("Failed", 'Error: failed to create containerd task: exec: "wge": executable file not found in $PATH: unknown (5 times)', "27:53");
    const backOff = event("BackOff", "Back-off restarting failed container downloader in pod logging-agent_default(c84db522) (26 times)", "27:55");
    const { verdict } = judgeExecution([backOff, failed], { time: new Date("2025-01-27T06:28:53Z") });
    expect(verdict.cause).toMatchObject({
      kind: "start/command-not-found",
      subject: "pod/logging-agent",
      detail: `Failed: ${failed.evidence.message}`,
      confidence: "high",
    });
    expect(verdict.symptoms.map(({ kind, detail }) => ({ kind, detail }))).toContainEqual({
      kind: "crash-loop",
      detail: `BackOff: ${backOff.evidence.message}`,
    });
  });
});

describe("a pull or a start that failed, in words", () => {
  it("quotes the kubelet's message, which names the image or the command", () => {
    const failed: EventEvidence = {
      kind: "event",
      action: "Events of logging-agent",
      subject: "pod/logging-agent",
      reason: "Failed",
      message: 'Error: failed to create containerd task: exec: "wge": executable file not found in $PATH: unknown (5 times)',
      warning: true,
      onset: new Date("2025-01-27T06:27:53Z"),
    };
    const time = new Date("2025-01-27T06:28:53Z");
    const quoted = '(Error: failed to create containerd task: exec: "wge": executable file not found in $PATH: unknown (5 times))';
    expect(symptomMovement(failed, time)).toBe(`Events of logging-agent: Failed on pod/logging-agent ${quoted} at 06:27 UTC`);
    expect(symptomLevel(failed, "Events", time)).toBe(`Events of logging-agent: Failed on pod/logging-agent ${quoted} (Events), at 06:27 UTC`);
  });
});
