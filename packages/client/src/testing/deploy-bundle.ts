/**
 * A bundle of a checkout latency incident after a deploy (its p99 rises three minutes after the rollout):
 * the analysis replays it to `deploy` of checkout. Its recorded verdict is a stand-in with `recordedConclusion`.
 */
export function deployBundle(recordedConclusion: "cause" | "no-cause" = "cause") {
  const window = { start: "2026-11-20T13:08:00.000Z", time: "2026-11-20T14:08:00.000Z", end: "2026-11-20T14:23:00.000Z" };
  const values: Array<[number, string]> = [];
  for (let at = Date.parse(window.start) / 1000; at <= Date.parse(window.end) / 1000; at += 15) {
    values.push([at, at >= Date.parse("2026-11-20T14:05:00Z") / 1000 ? "1.9" : String(0.44 + ((at / 15) % 3) * 0.02)]);
  }
  const verdict = {
    conclusion: recordedConclusion,
    symptoms: [],
    background: [],
    ruledOut: [],
    normal: [],
    unchecked: [],
  };
  return {
    v: 1,
    executionId: "0b6f2c7e-1c1a-4f2e-9a63-2f0d8f1e9a01",
    recordedAt: "2026-11-20T14:09:00.000Z",
    issue: { bookName: "Checkout latency", time: window.time, attributes: { service: "checkout" } },
    actions: [
      {
        gadget: "Latency",
        title: "p99 latency",
        connector: "prometheus",
        query: { query: "p99", range: true },
        window,
        observation: { kind: "prometheus", data: { resultType: "matrix", result: [{ metric: { service: "checkout" }, values }] }, unit: "s" },
      },
      {
        gadget: "Changes",
        title: "Last deploy of checkout",
        connector: "http",
        window,
        observation: {
          kind: "json",
          answer: { version: "v1.2.3", deployedAt: "2026-11-20T14:01:00Z" },
          answerField: "version",
          change: { kind: "deploy", timeField: "deployedAt", subject: "checkout" },
        },
      },
    ],
    mitigations: [
      { mitigation: { toolName: "argo", customName: "Roll back checkout", action: { rollback: "checkout" } }, when: { likelyCause: "deploy" }, offered: true },
      { mitigation: { toolName: "kubectl", customName: "Scale out checkout" }, when: { abnormal: false }, offered: false },
    ],
    verdict,
  };
}
