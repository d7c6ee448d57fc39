import type { KubernetesEvent, Node } from "@pes/contracts";
import { describedEvents } from "./events-text.js";
import { describeDate, describeFields, field, keyValues, listValues, parseTable, subFields, value } from "./kubectl-text.js";
import { parseTaints } from "./pod-spec-text.js";

/**
 * `kubectl describe nodes <name>`: labels, taints, whether it is cordoned, its conditions (with their
 * reasons, messages and times), capacity and allocatable, and its events.
 */
export function parseNodeDescribe(text: string, now: Date): { node: Node; events: KubernetesEvent[] } | undefined {
  const fields = describeFields(text);
  const name = value(fields, "Name");
  if (name === undefined) return undefined;
  const labels = keyValues(listValues(field(fields, "Labels")));
  const created = describeDate(value(fields, "CreationTimestamp") ?? "");
  const taints = parseTaints(listValues(field(fields, "Taints")));
  const unschedulable = value(fields, "Unschedulable");
  const conditions = parseTable(field(fields, "Conditions")?.lines ?? [], /^\s*Type\s+Status/).flatMap((row) => {
    if (row.Type === undefined || row.Type === "") return [];
    const heartbeat = describeDate(row.LastHeartbeatTime ?? "");
    const transition = describeDate(row.LastTransitionTime ?? "");
    return [
      {
        type: row.Type,
        status: row.Status ?? "Unknown",
        ...(row.Reason ? { reason: row.Reason } : {}),
        ...(row.Message ? { message: row.Message } : {}),
        ...(heartbeat === undefined ? {} : { lastHeartbeatTime: heartbeat }),
        ...(transition === undefined ? {} : { lastTransitionTime: transition }),
      },
    ];
  });
  const capacity = subFields(field(fields, "Capacity"));
  const allocatable = subFields(field(fields, "Allocatable"));
  const node: Node = {
    metadata: { name, ...(Object.keys(labels).length === 0 ? {} : { labels }), ...(created === undefined ? {} : { creationTimestamp: created }) },
    spec: { ...(unschedulable === undefined ? {} : { unschedulable: unschedulable === "true" }), ...(taints.length === 0 ? {} : { taints }) },
    status: {
      ...(conditions.length === 0 ? {} : { conditions }),
      ...(Object.keys(capacity).length === 0 ? {} : { capacity }),
      ...(Object.keys(allocatable).length === 0 ? {} : { allocatable }),
    },
  };
  return { node, events: describedEvents(field(fields, "Events"), { kind: "Node", name }, now) };
}

/**
 * `kubectl get nodes` (NAME STATUS ROLES AGE VERSION) as nodes, for a case without their describe:
 * `Ready`/`NotReady`/`Unknown` as the Ready condition, `SchedulingDisabled` as cordoned.
 */
export function nodesOfTable(text: string): Node[] {
  return parseTable(text, /^NAME\s+STATUS/).flatMap((row): Node[] => {
    const name = row.NAME;
    if (name === undefined || name === "") return [];
    const states = (row.STATUS ?? "").split(",");
    const ready = states.includes("Ready") ? "True" : states.includes("NotReady") ? "False" : "Unknown";
    return [{ metadata: { name }, spec: { unschedulable: states.includes("SchedulingDisabled") }, status: { conditions: [{ type: "Ready", status: ready }] } }];
  });
}
