// A connector added through the registry alone: its folder (testing/toy-connector) and one line in the
// list below. Configuration loading and the engine learn it from the registry they are given.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ConfigError, loadConfig } from "@pes/config";
import { createConnectorRegistry, stockConnectors } from "@pes/connectors";
import type { ExecutionJob } from "@pes/contracts";
import { createLogger } from "@pes/logger";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine } from "./engine.js";
import { toyConnector } from "./testing/toy-connector/schema.js";

const connectors = createConnectorRegistry([...stockConnectors, toyConnector]);

const organization = `id: acme
clientIds: [cli]
dataSources:
  metrics: { type: prometheus, url: "http://127.0.0.1:9" }
  words: { type: toy, url: "https://toy.example", signature: "the toy" }
`;

function playbook(word: string, dataSource = "words", silenceOn = "words"): string {
  return `name: shout
requiredAttributes: [service]
gadgets:
  - title: Toy
    actions:
      - title: "Word of {{service}}"
        dataSource: ${dataSource}
        toy: { word: "${word}" }
mitigations:
  - { toolName: toy, silence: { dataSource: ${silenceOn}, matchers: [{ name: service, value: "{{service}}" }], duration: 1h } }
`;
}

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function configDir(playbookText: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "pes-toy-"));
  dirs.push(dir);
  const files = { "organizations/acme.yaml": organization, "playbooks/acme/shout.yaml": playbookText };
  for (const [file, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), content);
  }
  return dir;
}

async function problems(dir: string, options: Parameters<typeof loadConfig>[1]): Promise<string[]> {
  const error: unknown = await loadConfig(dir, options).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(error)}`);
  return error.problems.map((problem) => `${problem.file}${problem.path === undefined ? "" : ` ${problem.path}`}: ${problem.message}`);
}

const job: ExecutionJob = {
  orgId: "acme",
  requestId: "req-toy",
  v: 1,
  replyTo: "api-1",
  deadline: Date.now() + 60_000,
  bookName: "shout",
  time: "2026-11-20T14:08:00Z",
  attributes: { service: "check out" },
  liveRun: false,
};

describe("a connector added through the registry alone", () => {
  it("loads with its registry and runs in the engine: its template language, its links, its answer", async () => {
    const catalog = await loadConfig(await configDir(playbook("{{service|loud}}!")), { connectors });
    const engine = createEngine({
      catalog,
      secrets: new Map(),
      connectors,
      logger: createLogger({ name: "toy-test", level: "silent" }),
      actionTimeoutMs: 5_000,
      maxConcurrentActions: 4,
    });
    const result = (await engine.investigate(job)).result;
    expect(result.actionResults).toEqual([
      { title: "Word of check out", shortAnswer: "Word of check out: CHECK OUT!, says the toy", mostImportantLink: "https://toy.example/words/CHECK%20OUT!" },
    ]);
    expect(result.actionableMitigations?.map(({ url }) => url)).toEqual(["https://toy.example/hush?service=check+out&by=the+toy"]);
  });

  it("is checked at load like the stock connectors: data-source type, filters, mitigation links, and unknown to a registry without it", async () => {
    expect(await problems(await configDir(playbook("{{service|regex}}")), { connectors })).toEqual([
      "playbooks/acme/shout.yaml gadgets.0.actions.0.toy.word: placeholder {{service|regex}}: unknown filter (known: loud)",
    ]);
    expect(await problems(await configDir(playbook("{{service}}", "metrics")), { connectors })).toEqual([
      'playbooks/acme/shout.yaml gadgets.0.actions.0.dataSource: data source "metrics" is of type prometheus, but the action\'s query key is toy',
    ]);
    expect(await problems(await configDir(playbook("{{service}}", "words", "metrics")), { connectors })).toEqual([
      'playbooks/acme/shout.yaml mitigations.0.silence.dataSource: data source "metrics" is of type prometheus, not alertmanager or toy',
    ]);
    expect(await problems(await configDir(playbook("{{service}}")), {})).toEqual([
      `organizations/acme.yaml dataSources.words.type: Invalid discriminator value. Expected ${stockConnectors.map((connector) => `'${connector.type}'`).join(" | ")}`,
      'playbooks/acme: the playbooks of organization "acme" are checked once its organization file is valid',
    ]);
  });
});
