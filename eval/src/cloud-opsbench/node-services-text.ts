import type { ContainerLog, Pod } from "@pes/contracts";
import { localDate } from "./kubectl-text.js";

/**
 * A node's system service as `systemctl status` shows it (the benchmark's CheckNodeServiceStatus:
 * kubelet, containerd, kube-proxy, kube-scheduler run as systemd units on its clusters, not as pods).
 * The contract has no node services, so each becomes the kube-system pod that stands for the component
 * on a cluster that runs it as a static pod: `<service>-<node>`, label `component: <service>`, on that
 * node, running or terminated with systemd's state as the reason; the journal lines of a stopped one
 * are its log.
 */
export function nodeServicePod(node: string, service: string, text: string, zone: string): { pod: Pod; log?: ContainerLog } {
  const active = /^\s*Active:\s*(\S+)(?:\s+\(([^)]*)\))?(?:\s+since\s+\w{3}\s+(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}))?/m.exec(text);
  const state = active?.[1] ?? "unknown";
  const sub = active?.[2];
  const since = active?.[3] === undefined ? undefined : localDate(active[3], zone);
  const running = state === "active" && (sub === undefined || sub === "running");
  const name = `${service}-${node}`;
  const reason = sub === undefined ? state : `${state} (${sub})`;
  const pod: Pod = {
    metadata: { name, namespace: "kube-system", labels: { component: service }, annotations: { "cloud-opsbench/source": "systemctl status" } },
    spec: { nodeName: node, containers: [{ name: service }] },
    status: {
      phase: running ? "Running" : "Failed",
      conditions: [{ type: "Ready", status: running ? "True" : "False" }],
      containerStatuses: [
        {
          name: service,
          restartCount: 0,
          ready: running,
          state: running
            ? { running: since === undefined ? {} : { startedAt: since } }
            : { terminated: { reason, ...(since === undefined ? {} : { finishedAt: since }) } },
        },
      ],
    },
  };
  if (running) return { pod };
  const journal = text
    .split("\n")
    .filter((line) => /^\w{3} \d{1,2} \d{2}:\d{2}:\d{2} /.test(line))
    .slice(-50);
  return { pod, ...(journal.length === 0 ? {} : { log: { pod: name, container: service, lines: journal } }) };
}
