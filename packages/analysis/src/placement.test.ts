import { describe, expect, it } from "vitest";
import type { Evidence, MetricEvidence } from "./evidence.js";
import { confinedTo } from "./placement.js";
import { bottomLineOf } from "./summarize.js";
import type { Finding } from "./ranking.js";
import { judgeExecution } from "./verdict.js";

const time = new Date("2026-11-21T14:00:00Z");
const at = (minutes: number) => new Date(time.getTime() + minutes * 60_000);

function latency(confined: MetricEvidence["confined"], onset = at(-7)): Finding {
  return {
    gadget: "Latency",
    evidence: {
      kind: "metric",
      action: "p99 latency by node",
      labels: { node: "node-2" },
      seriesCount: 3,
      value: 1.6,
      baseline: 0.23,
      low: 0.2,
      high: 0.25,
      ratio: 7,
      severity: 7,
      abnormal: true,
      onset,
      baselineMs: 3_600_000,
      ...(confined === undefined ? {} : { confined }),
    },
  };
}
const nodeAlert = (node: string, minutes: number): Finding => ({
  gadget: "Nodes",
  evidence: { kind: "alert", action: "Alerts of the nodes", name: "NodeDiskIOSaturation", subject: `node=${node}`, labels: { node }, onset: at(minutes) },
});
const onNode2 = { label: "node", value: "node-2", abnormal: 1, of: 3 };

describe("confinedTo", () => {
  const series = (node: string, abnormal: boolean, zone?: string) => ({ labels: { node, ...(zone === undefined ? {} : { zone }) }, abnormal });

  it("places abnormal series that all run on one node, when the others were judged and held", () => {
    expect(confinedTo([series("node-1", false), series("node-2", true), series("node-3", false)])).toEqual(onNode2);
  });

  it("places nothing when series on several nodes moved, when only one was judged, or when none carries a node", () => {
    expect(confinedTo([series("node-1", true), series("node-2", true), series("node-3", false)])).toBeUndefined();
    expect(confinedTo([series("node-2", true)])).toBeUndefined();
    expect(
      confinedTo([
        { labels: { pod: "a" }, abnormal: true },
        { labels: { pod: "b" }, abnormal: false },
      ]),
    ).toBeUndefined();
  });

  it("falls back to the zone when the abnormal series are on several nodes of one zone", () => {
    const placed = confinedTo([series("node-1", true, "a"), series("node-2", true, "a"), series("node-3", false, "b")]);
    expect(placed).toEqual({ label: "zone", value: "a", abnormal: 2, of: 3 });
  });
});

describe("a node as the likely cause", () => {
  const judge = (findings: Finding[]) => judgeExecution(findings, { time }).verdict;

  it("is the node when only its pods moved and the node itself fires, whatever came first", () => {
    const verdict = judge([latency(onNode2), nodeAlert("node-2", -5), nodeAlert("node-3", -300)]);
    expect(verdict.cause).toMatchObject({ kind: "node", subject: "node/node-2", action: "p99 latency by node", confidence: "high" });
    expect(verdict.background.map(({ subject }) => subject)).toEqual(["node=node-3"]);
  });

  it("is not the node without the node's own signal, nor when the alert is another node's, nor when the symptoms are everywhere", () => {
    expect(judge([latency(onNode2)]).cause).toBeUndefined();
    expect(judge([latency(onNode2), nodeAlert("node-1", -5)]).cause?.kind).not.toBe("node");
    expect(judge([latency(undefined), nodeAlert("node-2", -5)]).cause?.kind).not.toBe("node");
  });

  it("maps a node-exporter target (instance=node-2:9100) to the node the incident names, for its series and its alerts", () => {
    const ioWait: Finding = {
      gadget: "Nodes",
      evidence: {
        ...(latency(undefined, at(-8)).evidence as MetricEvidence),
        action: "I/O wait per instance",
        labels: { instance: "node-2:9100" },
        confined: { label: "instance", value: "node-2:9100", abnormal: 1, of: 3 },
      },
    };
    const targetAlert: Finding = {
      gadget: "Nodes",
      evidence: {
        kind: "alert",
        action: "Alerts of the nodes",
        name: "NodeDiskIOSaturation",
        subject: "instance=node-2:9100",
        labels: { instance: "node-2:9100" },
        onset: at(-5),
      },
    };
    expect(judge([latency(onNode2), ioWait, targetAlert]).cause).toMatchObject({ kind: "node", subject: "node/node-2", action: "I/O wait per instance" });
    // A target that names no node of the incident (a database's exporter) places nothing.
    const database: Finding = {
      gadget: "DB",
      evidence: { ...(ioWait.evidence as MetricEvidence), action: "Connections", confined: { label: "instance", value: "db-1:9187", abnormal: 1, of: 2 } },
    };
    expect(judge([latency(onNode2), database, targetAlert]).cause).toMatchObject({ kind: "node", subject: "node/node-2" });
  });

  it("reads as the node, where first, then what the node itself shows", () => {
    const text = bottomLineOf(judgeExecution([latency(onNode2), nodeAlert("node-2", -5)], { time }), { service: "catalog" });
    expect(text).toContain(
      "likely cause: node-2: only the pods on node-2 are abnormal (p99 latency by node (node=node-2) 7× its level in the hour before (Latency), since 13:53 UTC), and node-2 itself: Alerts of the nodes: NodeDiskIOSaturation firing (Nodes), since 13:55 UTC.",
    );
  });

  it("yields to a resource of the node at its limit: that says what made it slow", () => {
    const memory: Finding = {
      gadget: "Nodes",
      evidence: {
        ...(latency(onNode2).evidence as MetricEvidence),
        action: "Memory per node",
        onset: at(-9),
        severity: 10_001,
        saturation: { limit: 0.9, direction: "up" },
      },
    };
    expect(judge([latency(onNode2), memory, nodeAlert("node-2", -5)]).cause).toMatchObject({ kind: "saturation", action: "Memory per node" });
  });

  it("yields to a deploy just before the symptoms", () => {
    const deploy: Evidence = { kind: "change", action: "Rollouts", change: "deploy", subject: "catalog", at: at(-9) };
    expect(judge([latency(onNode2), nodeAlert("node-2", -5), { gadget: "Changes", evidence: deploy }]).cause?.kind).toBe("deploy");
  });
});
