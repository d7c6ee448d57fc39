import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RISING_SERIES } from "./stub-data-source.js";

export const BENCH_ORG = "bench";
export const BENCH_CLIENT_ID = "quickstart-cli";
/** Scenario 1, 2 and 4: one gadget with one range query against the instant stub. */
export const ONE_ACTION_PLAYBOOK = "one-action";
/**
 * `bench:compare --playbook=rising`: scenario 1's playbook over a series that rises at the issue time, so
 * that every execution's verdict names a symptom: a storm of one incident, as the memory sees it.
 */
export const RISING_PLAYBOOK = "rising";
/** Scenario 3: 10 gadgets × 3 actions against the stub that answers after the slow delay. */
export const PARALLEL_PLAYBOOK = "ten-by-three";
export const PARALLEL_GADGETS = 10;
export const PARALLEL_ACTIONS_PER_GADGET = 3;
/**
 * The storm and the webhook intake: one range query of the instant stub, like scenario 1's, for one
 * `service`, taken from the alert's label (or the request's attributes). Distinct services are distinct
 * issues; the same service at the same time is the same issue.
 */
export const ALERT_PLAYBOOK = "alerted";
export const ALERT_NAME = "BenchAlert";

/**
 * Writes the CONFIG_DIR the API and workers load: one organization with two Prometheus data sources
 * (the instant stub and the slow one) and the benchmark playbooks. The files are JSON, which is
 * valid YAML, so the harness needs no YAML writer.
 */
export function writeBenchConfig(configDir: string, stubs: { instantUrl: string; slowUrl: string }): void {
  const orgDir = join(configDir, "organizations");
  const playbookDir = join(configDir, "playbooks", BENCH_ORG);
  mkdirSync(orgDir, { recursive: true });
  mkdirSync(playbookDir, { recursive: true });
  writeJsonYaml(join(orgDir, `${BENCH_ORG}.yaml`), {
    id: BENCH_ORG,
    clientIds: [BENCH_CLIENT_ID],
    dataSources: {
      stub: { type: "prometheus", url: stubs.instantUrl },
      slow: { type: "prometheus", url: stubs.slowUrl },
    },
  });
  writeJsonYaml(join(playbookDir, `${ONE_ACTION_PLAYBOOK}.yaml`), {
    name: ONE_ACTION_PLAYBOOK,
    monitorNames: ["Bench one action"],
    gadgets: [{ title: "Up", actions: [{ title: "up", dataSource: "stub", prometheus: { query: "up", range: true } }] }],
    mitigations: [],
  });
  writeJsonYaml(join(playbookDir, `${RISING_PLAYBOOK}.yaml`), {
    name: RISING_PLAYBOOK,
    monitorNames: ["Bench rising"],
    gadgets: [{ title: "Load", actions: [{ title: "load", dataSource: "stub", prometheus: { query: RISING_SERIES, range: true } }] }],
    mitigations: [],
  });
  writeJsonYaml(join(playbookDir, `${ALERT_PLAYBOOK}.yaml`), {
    name: ALERT_PLAYBOOK,
    monitorNames: [ALERT_NAME],
    requiredAttributes: ["service"],
    gadgets: [{ title: "Up", actions: [{ title: "up", dataSource: "stub", prometheus: { query: "up{service={{service}}}", range: true } }] }],
    mitigations: [],
  });
  writeJsonYaml(join(playbookDir, `${PARALLEL_PLAYBOOK}.yaml`), {
    name: PARALLEL_PLAYBOOK,
    monitorNames: ["Bench ten by three"],
    gadgets: Array.from({ length: PARALLEL_GADGETS }, (_, gadget) => ({
      title: `Gadget ${gadget + 1}`,
      actions: Array.from({ length: PARALLEL_ACTIONS_PER_GADGET }, (_, action) => ({
        title: `Query ${gadget + 1}.${action + 1}`,
        dataSource: "slow",
        prometheus: { query: `up{gadget="g${gadget + 1}", action="a${action + 1}"}`, range: true },
      })),
    })),
    mitigations: [],
  });
}

function writeJsonYaml(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}
