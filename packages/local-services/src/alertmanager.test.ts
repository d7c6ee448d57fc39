import { access } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAlertmanager, type LocalAlertmanager } from "./alertmanager.js";

describe("startAlertmanager", () => {
  let alertmanager: LocalAlertmanager;
  beforeAll(async () => {
    alertmanager = await startAlertmanager();
  });
  afterAll(async () => {
    await alertmanager?.stop();
  });

  it("serves the alerts posted to it, started in the past, as firing", async () => {
    const startsAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 20 * 60_000);
    await alertmanager.postAlerts([{ labels: { alertname: "HighErrorRate", service: "checkout", severity: "critical" }, startsAt }]);
    const response = await fetch(`${alertmanager.url}/api/v2/alerts?filter=${encodeURIComponent('service="checkout"')}`);
    const alerts = (await response.json()) as Array<{ labels: Record<string, string>; startsAt: string; status: { state: string } }>;
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ labels: { alertname: "HighErrorRate" }, status: { state: "active" } });
    expect(Date.parse(alerts[0]?.startsAt ?? "")).toBe(startsAt.getTime());
  });

  it("creates silences", async () => {
    const id = await alertmanager.postSilence({
      matchers: [{ name: "service", value: "checkout" }],
      startsAt: new Date(),
      endsAt: new Date(Date.now() + 3_600_000),
      createdBy: "ops",
      comment: "maintenance",
    });
    const response = await fetch(`${alertmanager.url}/api/v2/silence/${id}`);
    expect(await response.json()).toMatchObject({ id, createdBy: "ops", status: { state: "active" } });
  });

  it("says what Alertmanager refused", async () => {
    await expect(alertmanager.postAlerts([{ labels: {} }])).rejects.toThrow(/alertmanager answered 400 to POST \/api\/v2\/alerts/);
  });

  it("stops and removes its directory, twice safely", async () => {
    const extra = await startAlertmanager();
    await access(extra.directory);
    await extra.stop();
    await extra.stop();
    await expect(fetch(`${extra.url}/-/ready`)).rejects.toThrow();
    await expect(access(extra.directory)).rejects.toThrow(/ENOENT/);
  });
});
