import type { GettableAlert, GettableSilence } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { readAlertmanager } from "./alertmanager-reading.js";

const MINUTE = 60_000;
const now = Date.parse("2026-11-20T14:18:00Z");
const window = { start: new Date(now - 60 * MINUTE), time: new Date(now - 10 * MINUTE), end: new Date(now + 5 * MINUTE) };
const reading = { action: "Related alerts", window, link: "https://alerts.example/#/alerts" };
/** An alert as Alertmanager holds it now: firing since `startedMinutes` ago, until it is resolved. */
const alert = (labels: Record<string, string>, startedMinutes: number): GettableAlert => ({
  labels,
  startsAt: new Date(now - startedMinutes * MINUTE).toISOString(),
  endsAt: new Date(now + 4 * MINUTE).toISOString(),
});

describe("readAlertmanager", () => {
  it("reads the same alerts in any order alike: of the same severity and onset, by their labels", () => {
    const alerts = Array.from({ length: 25 }, (_, index) =>
      alert({ alertname: "KubePodNotReady", pod: `pod-${String(index).padStart(2, "0")}`, severity: "warning" }, 15),
    );
    const read = (order: GettableAlert[]) => readAlertmanager({ kind: "alertmanager", alerts: order }, reading);
    expect(read([...alerts].reverse())).toEqual(read(alerts));
    expect(read(alerts).map((found) => (found.kind === "alert" ? found.subject : undefined))).toEqual(
      alerts.slice(0, 20).map(({ labels }) => `pod=${labels.pod}`),
    );
  });

  it("reads the alerts that fired in the window, most severe first, each for what its labels say", () => {
    const found = readAlertmanager(
      {
        kind: "alertmanager",
        alerts: [
          alert({ alertname: "HighLatency", service: "checkout", severity: "warning" }, 30),
          alert({ alertname: "HighErrorRate", service: "checkout", instance: "checkout-1:8080", severity: "critical" }, 20),
        ],
      },
      reading,
    );
    expect(found).toEqual([
      {
        kind: "alert",
        action: "Related alerts",
        link: "https://alerts.example/#/alerts",
        name: "HighErrorRate",
        subject: "instance=checkout-1:8080, service=checkout",
        labels: { instance: "checkout-1:8080", service: "checkout" },
        level: "critical",
        onset: new Date(now - 20 * MINUTE),
      },
      {
        kind: "alert",
        action: "Related alerts",
        link: "https://alerts.example/#/alerts",
        name: "HighLatency",
        subject: "service=checkout",
        labels: { service: "checkout" },
        level: "warning",
        onset: new Date(now - 30 * MINUTE),
      },
    ]);
  });

  it("keeps only the alerts firing in the window: an earlier window finds none", () => {
    const earlier = { start: new Date(now - 5 * 60 * MINUTE), time: new Date(now - 4 * 60 * MINUTE), end: new Date(now - 3 * 60 * MINUTE) };
    const found = readAlertmanager(
      { kind: "alertmanager", alerts: [alert({ alertname: "HighLatency", service: "checkout" }, 30)] },
      { ...reading, window: earlier },
    );
    expect(found).toEqual([{ kind: "none", action: "Related alerts", link: "https://alerts.example/#/alerts", what: "alerts firing" }]);
  });

  it("tells the silences active in the window, after the alerts", () => {
    const silence = (state: GettableSilence["status"]["state"], endsAt: string): GettableSilence => ({
      id: `s-${state}`,
      startsAt: new Date(now - MINUTE).toISOString(),
      endsAt,
      createdBy: "ops",
      comment: "cart maintenance",
      status: { state },
    });
    const found = readAlertmanager(
      {
        kind: "alertmanager",
        alerts: [],
        silences: [
          silence("active", "2026-11-20T15:18:00.000Z"),
          silence("pending", "2026-11-20T16:00:00.000Z"),
          silence("active", "2026-11-21T09:00:00.000Z"),
        ],
      },
      reading,
    );
    expect(found.map((evidence) => (evidence.kind === "answer" ? evidence.text : evidence.kind))).toEqual([
      "none",
      "silenced by ops until 15:18 UTC: cart maintenance",
      "silenced by ops until 2026-11-21 09:00 UTC: cart maintenance",
    ]);
  });
});
