import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Catalog } from "@pes/config";
import { catalogOf } from "@pes/config/testing";
import type { ExecutionJob } from "@pes/contracts";
import { startAlertmanager, type LocalAlertmanager } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { createEngine } from "./engine.js";

const logger = createLogger({ name: "silence-test", level: "silent" });
/** Quotes, braces, a comma, a regex and a newline: a value built to add a matcher if it were spliced. */
const HOSTILE = 'check"out}, env=~".*"\nx\\';

/** acme with an Alertmanager and a playbook whose silence is offered when something fires. */
async function catalogWith(alertmanagerUrl: string): Promise<Catalog> {
  const dataSources = { alerts: { type: "alertmanager", url: alertmanagerUrl } };
  const playbook = {
    name: "Alerts",
    requiredAttributes: ["service"],
    gadgets: [
      {
        title: "Alerts",
        actions: [{ title: "Alerts of {{service}}", dataSource: "alerts", alertmanager: { matchers: [{ name: "service", value: "{{service}}" }] } }],
      },
    ],
    mitigations: [
      {
        toolName: "Alertmanager",
        customName: "Silence {{service}} for 2h",
        when: { abnormal: true },
        silence: {
          dataSource: "alerts",
          matchers: [
            { name: "service", value: "{{service}}" },
            { name: "alertname", value: "HighLatency" },
          ],
          duration: "2h",
        },
      },
    ],
  };
  return catalogOf({ organizations: [{ id: "acme", clientIds: ["client-1"], dataSources }], playbooks: { acme: [playbook] } });
}

describe("an Alertmanager silence mitigation, against a real Alertmanager", () => {
  let alertmanager: LocalAlertmanager;
  beforeAll(async () => {
    alertmanager = await startAlertmanager();
  });
  afterAll(async () => {
    await alertmanager?.stop();
  });

  it("is offered when an alert fires, and Alertmanager takes its action as it is, with the matchers exactly as rendered", async () => {
    const time = new Date();
    await alertmanager.postAlerts([{ labels: { alertname: "HighLatency", service: HOSTILE }, startsAt: new Date(time.getTime() - 5 * 60_000) }]);
    const engine = createEngine({ catalog: await catalogWith(alertmanager.url), secrets: new Map(), logger, actionTimeoutMs: 10_000, maxConcurrentActions: 4 });
    try {
      const job: ExecutionJob = {
        orgId: "acme",
        requestId: "req-1",
        v: 1,
        replyTo: "api-1",
        deadline: Date.now() + 60_000,
        bookName: "Alerts",
        time: time.toISOString(),
        attributes: { service: HOSTILE },
        liveRun: false,
      };
      const result = (await engine.investigate(job)).result;
      expect(result.highlights).toMatch(/HighLatency/);
      const [silence] = result.actionableMitigations ?? [];
      expect(silence?.customName).toBe(`Silence ${HOSTILE} for 2h`);
      expect(silence?.url?.startsWith(`${alertmanager.url}/#/silences/new?filter=`)).toBe(true);

      const posted = await fetch(`${alertmanager.url}/api/v2/silences`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(silence?.action),
      });
      expect(posted.status).toBe(200);
      const { silenceID } = (await posted.json()) as { silenceID: string };
      const stored = (await (await fetch(`${alertmanager.url}/api/v2/silence/${silenceID}`)).json()) as {
        matchers: unknown[];
        endsAt: string;
        status: { state: string };
      };
      expect(stored.matchers).toEqual([
        { name: "service", value: HOSTILE, isRegex: false, isEqual: true },
        { name: "alertname", value: "HighLatency", isRegex: false, isEqual: true },
      ]);
      expect(stored.status.state).toBe("active");
      expect(new Date(stored.endsAt).getTime()).toBe(time.getTime() + 2 * 3_600_000);

      // The alert is now silenced: the same execution finds it no more.
      const after = (await engine.investigate(job)).result;
      expect(after.actionResults?.[0]?.shortAnswer).toMatch(/no alerts firing/);
      expect(after.actionableMitigations).toEqual([]);
    } finally {
      await engine.close();
    }
  });
});
