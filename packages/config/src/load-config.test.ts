import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createConnectorRegistry, defineConnector, stockConnectors } from "@pes/connectors/schemas";
import { templatesOf } from "@pes/playbooks";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "./config-error.js";
import { loadConfig } from "./load-config.js";

const exampleDir = join(dirname(fileURLToPath(import.meta.url)), "../../../config/example");

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Writes a config directory from relative path → content. */
async function configDir(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "pes-config-"));
  dirs.push(dir);
  for (const [file, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), content);
  }
  return dir;
}

async function loadError(files: Record<string, string>): Promise<ConfigError> {
  const error: unknown = await loadConfig(await configDir(files)).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(error)}`);
  return error;
}

const acme = `id: acme
clientIds: [cli]
dataSources:
  prom:
    type: prometheus
    url: http://127.0.0.1:9090
  status:
    type: http
    url: http://127.0.0.1:9099
`;

/** A valid playbook; `extra` is appended (YAML), `gadgetAction` replaces the one action. */
function playbook(name: string, options: { monitorNames?: string; action?: string; extra?: string } = {}): string {
  return `name: ${name}
monitorNames: ${options.monitorNames ?? `["${name} on {{host}}"]`}
gadgets:
  - title: "Gadget of {{host}}"
    actions:
${
  options.action ??
  `      - title: up
        dataSource: prom
        prometheus:
          query: 'up{instance={{host}}}'`
}
${options.extra ?? ""}`;
}

describe("loadConfig on config/example", () => {
  it("loads every organization with its playbooks", async () => {
    const catalog = await loadConfig(exampleDir);
    expect([...catalog.organizations.keys()]).toEqual(["acme", "globex", "shop"]);

    const acmeCatalog = catalog.organizations.get("acme");
    expect([...(acmeCatalog?.clientIds ?? [])]).toEqual(["quickstart-cli"]);
    expect(acmeCatalog?.dataSources.get("metrics")).toEqual({ type: "prometheus", url: "http://127.0.0.1:9090" });
    expect(acmeCatalog?.dataSources.get("deploys")?.type).toBe("http");
    expect(acmeCatalog?.playbookList).toEqual([
      { name: "checkout-errors", monitorNames: ["High error rate on {{service}} in {{env}}"], requiredAttributes: ["service"] },
      {
        name: "checkout-latency",
        monitorNames: ["High latency on {{service}} in {{env}}", "Checkout p99 latency above SLO"],
        requiredAttributes: ["service"],
      },
      { name: "node-cpu", monitorNames: ["High CPU on {{host}}"] },
    ]);
    expect(acmeCatalog?.playbooks.get("node-cpu")?.window).toEqual({ before: "1h", after: "15m" });
    expect(acmeCatalog?.matcher.match("High latency on checkout in prod")).toEqual({
      bookName: "checkout-latency",
      monitorName: "High latency on {{service}} in {{env}}",
      attributes: { service: "checkout", env: "prod" },
    });
    expect(acmeCatalog?.matcher.match("High CPU on node-1:9100")?.attributes).toEqual({ host: "node-1:9100" });
    expect(acmeCatalog?.matcher.match("Disk almost full on db-1")).toBeUndefined();

    const globex = catalog.organizations.get("globex");
    expect(globex?.clientIds.size).toBe(0);
    expect(globex?.playbookList.map((item) => item.name)).toEqual(["disk-full"]);

    // The scenario suite's shop: a data source of every kind but datadog (whose keys the example cannot hold).
    const shop = catalog.organizations.get("shop");
    expect([...(shop?.dataSources.values() ?? [])].map((dataSource) => dataSource.type).sort()).toEqual([
      "alertmanager",
      "elasticsearch",
      "kubernetes",
      "loki",
      "prometheus",
    ]);
    expect(shop?.playbookList.map((item) => item.name)).toEqual([
      "database-connections",
      "node-memory",
      "pods-not-ready",
      "service-health",
      "service-latency-by-node",
      "service-memory",
      "service-slowdown",
    ]);
    expect(shop?.matcher.match("Too many connections on orders-db")?.attributes).toEqual({ database: "orders-db" });
  });

  it("keeps the example queries on the metric names the end-to-end data generates", async () => {
    const catalog = await loadConfig(exampleDir);
    const playbook = catalog.organizations.get("acme")?.playbooks.get("checkout-latency");
    const queries = (playbook === undefined ? [] : templatesOf(playbook)).filter(({ target }) => target === "promql").map(({ template }) => template);
    for (const query of queries) {
      const metrics = query.match(/[a-z_]+(?=\{)/g) ?? [];
      expect(metrics.every((name) => ["http_request_duration_seconds_bucket", "http_requests_total"].includes(name))).toBe(true);
    }
    expect(queries).toHaveLength(3);
  });
});

describe("loadConfig errors", () => {
  it("names the file, the field and the defined data sources for an unknown data source", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/checkout.yaml": playbook("checkout", {
        action: `      - title: up
        dataSource: prom
        prometheus: { query: 'up' }
      - title: logs
        dataSource: lokii
        prometheus: { query: 'up' }`,
      }),
    });
    expect(error.problems).toEqual([
      {
        file: "playbooks/acme/checkout.yaml",
        path: "gadgets.0.actions.1.dataSource",
        line: 10,
        message: 'data source "lokii" is not defined in organizations/acme.yaml (defined: prom, status)',
      },
    ]);
    expect(error.message).toBe(
      'config error in playbooks/acme/checkout.yaml at gadgets.0.actions.1.dataSource: data source "lokii" is not ' +
        "defined in organizations/acme.yaml (defined: prom, status) (line 10)",
    );
  });

  it("refuses an action whose query does not match its data source's type", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": playbook("p", {
        action: `      - title: status
        dataSource: prom
        http: { path: /status, answerField: state }`,
      }),
    });
    expect(error.message).toContain(
      'config error in playbooks/acme/p.yaml at gadgets.0.actions.0.dataSource: data source "prom" is of type prometheus, but the action\'s query key is http',
    );
  });

  it("refuses an organization whose id is not its file name", async () => {
    const error = await loadError({ "organizations/acme.yaml": acme.replace("id: acme", "id: other") });
    expect(error.message).toBe('config error in organizations/acme.yaml at id: id "other" must equal the file name "acme" (line 1)');
  });

  it("refuses playbooks of an organization without an organization file", async () => {
    const error = await loadError({ "organizations/acme.yaml": acme, "playbooks/initech/p.yaml": playbook("p") });
    expect(error.message).toBe('config error in playbooks/initech: organization "initech" has no organization file organizations/initech.yaml');
  });

  it("refuses two playbooks whose names differ only in case", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/a.yaml": playbook("Checkout"),
      "playbooks/acme/b.yaml": playbook("checkout", { monitorNames: '["other {{host}}"]' }),
    });
    expect(error.message).toBe(
      'config error in playbooks/acme/b.yaml at name: playbook name "checkout" is already used in playbooks/acme/a.yaml (names are compared ignoring case) (line 1)',
    );
  });

  it("refuses a placeholder that is no attribute of the playbook, and accepts declared ones", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": playbook("p", {
        extra: `requiredAttributes: [service]
mitigations:
  - toolName: "Runbook of {{servcie}}"`,
      }),
    });
    expect(error.message).toBe(
      "config error in playbooks/acme/p.yaml at mitigations.0.toolName: placeholder {{servcie}} is not an attribute of " +
        "this playbook: add it to requiredAttributes or optionalAttributes, or capture it in a monitor name " +
        "(known: host, service) (line 12)",
    );

    const dir = await configDir({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": playbook("p", {
        extra: `requiredAttributes: [service]
optionalAttributes: [region]
mitigations:
  - toolName: "Runbook of {{service}} in {{region}} for {{host}}"`,
      }),
    });
    expect((await loadConfig(dir)).organizations.get("acme")?.playbookList).toEqual([
      { name: "p", monitorNames: ["p on {{host}}"], requiredAttributes: ["service"] },
    ]);
  });

  it("checks conditional mitigations and silences: an action title of the playbook, an Alertmanager, exact matchers for at most 24 h", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": playbook("p", {
        extra: `mitigations:
  - { toolName: a, when: { action: "no such action" } }
  - { toolName: b, when: { likelyCause: rollout } }
  - { toolName: c, when: {} }
  - { toolName: d, silence: { dataSource: prom, matchers: [{ name: host, value: "{{host}}" }], duration: 2h } }
  - { toolName: e, silence: { matchers: [{ name: host, value: "{{hots}}" }], duration: 25h } }
  - { toolName: f, silence: { matchers: [], duration: 1h } }
  - { toolName: g, silence: { matchers: [{ name: "bad-name", value: x }], duration: 1h }, action: { x: 1 } }
  - { toolName: ok, when: { action: up, abnormal: true, change: deploy }, silence: { matchers: [{ name: host, value: "{{host}}" }], duration: 24h, comment: "{{host}}" } }`,
      }),
    });
    expect(error.problems.map((problem) => `${problem.path}: ${problem.message}`)).toEqual([
      'mitigations.1.when.likelyCause: Invalid option: expected one of "deploy"|"config"|"restart"|"saturation"|"outage"|"oom"|"crash-loop"|"eviction"|"node-not-ready"|"unschedulable"|"alert"|"upstream"|"node"',
      "mitigations.2.when: give at least one of abnormal, change, likelyCause, action",
      "mitigations.4.silence.duration: must be more than 0 and at most 24h",
      "mitigations.5.silence.matchers: a silence needs at least one matcher: without one it would silence everything",
      "mitigations.6.silence.matchers.0.name: must be a label name (letters, digits and _, not starting with a digit)",
      "mitigations.6.silence: a silence is the mitigation's action: give silence or action, not both",
    ]);
  });

  it("checks what needs the whole organization: a when.action among the playbook's titles, a silence's Alertmanager", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": playbook("p", {
        extra: `mitigations:
  - { toolName: a, when: { action: "no such action" } }
  - { toolName: d, silence: { dataSource: prom, matchers: [{ name: host, value: "{{host}}" }], duration: 2h } }
  - { toolName: e, silence: { dataSource: nowhere, matchers: [{ name: host, value: "{{hots}}" }], duration: 2h } }
  - { toolName: ok, when: { action: up }, silence: { matchers: [{ name: host, value: "{{host}}" }], duration: 24h } }`,
      }),
    });
    expect(error.problems.map((problem) => `${problem.path}: ${problem.message}`)).toEqual([
      expect.stringMatching(/^mitigations\.2\.silence\.matchers\.0\.value: placeholder \{\{hots\}\} is not an attribute/),
      'mitigations.0.when.action: "no such action" is not the title of an action of this playbook (write it as the action\'s title is written)',
      'mitigations.1.silence.dataSource: data source "prom" is of type prometheus, not alertmanager',
      'mitigations.2.silence.dataSource: data source "nowhere" is not defined in organizations/acme.yaml',
    ]);
  });

  it("takes a silence's data source by what its connector offers, not by its type's name", async () => {
    const [prometheus, http, ...rest] = stockConnectors;
    // The http connector as one that also links to a silence form.
    const silencingHttp = defineConnector({ ...http.definition, mitigationLinks: { silence: (dataSource) => `${dataSource.url}/silences/new` } });
    const connectors = createConnectorRegistry([prometheus, silencingHttp, ...rest]);
    const files = {
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": playbook("p", {
        extra: `mitigations:
  - { toolName: d, silence: { dataSource: prom, matchers: [{ name: host, value: "{{host}}" }], duration: 2h } }
  - { toolName: ok, silence: { dataSource: status, matchers: [{ name: host, value: "{{host}}" }], duration: 2h } }`,
      }),
    };
    const error: unknown = await loadConfig(await configDir(files), { connectors }).catch((thrown: unknown) => thrown);
    if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(error)}`);
    expect(error.problems.map((problem) => `${problem.path}: ${problem.message}`)).toEqual([
      'mitigations.0.silence.dataSource: data source "prom" is of type prometheus, not http or alertmanager',
    ]);
  });

  it("refuses an attribute that is both required and optional", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": playbook("p", { extra: "requiredAttributes: [a]\noptionalAttributes: [a]" }),
    });
    expect(error.message).toContain('at optionalAttributes: attribute "a" is both required and optional');
  });

  it("allows filters only in prometheus queries, and only known ones", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": playbook("p", {
        action: `      - title: up
        dataSource: prom
        prometheus: { query: 'up{instance=~{{host|regex}}, job={{host|upper}}}' }`,
        extra: `mitigations:
  - toolName: "Tool {{host|regex}}"`,
      }),
    });
    expect(error.problems.map((problem) => `${problem.path}: ${problem.message}`)).toEqual([
      "gadgets.0.actions.0.prometheus.query: placeholder {{host|upper}}: unknown filter (known: regex)",
      "mitigations.0.toolName: placeholder {{host|regex}}: filters apply only in prometheus queries and loki selectors and alertmanager regex matchers",
    ]);
  });

  it("binds {{upstream}} in a gadget that declares upstreams, and refuses it elsewhere, an unknown `by` and titles that do not name it", async () => {
    const upstreamGadget = (title: string, actionTitle: string, upstreams: string) => `  - title: "${title}"
    upstreams: ${upstreams}
    actions:
      - title: "${actionTitle}"
        dataSource: prom
        prometheus: { query: 'up{job={{upstream}}}' }`;
    const dir = await configDir({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": `${playbook("p")}\n${upstreamGadget("Upstream {{upstream}} of {{host}}", "up of {{upstream}}", "{ by: host, lists: { web-1: [orders, cart] } }")}\n`,
    });
    const gadget = (await loadConfig(dir)).organizations.get("acme")?.playbooks.get("p")?.gadgets[1];
    expect(gadget?.upstreams).toEqual({ by: "host", lists: { "web-1": ["orders", "cart"] } });

    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": `${playbook("p", { extra: 'mitigations:\n  - toolName: "Runbook of {{upstream}}"' }).replace("gadgets:\n", `gadgets:\n${upstreamGadget("Upstreams of {{host}}", "up", "{ by: env, lists: { prod: [orders] } }")}\n`)}`,
    });
    expect(error.problems.map((problem) => `${problem.path}: ${problem.message}`)).toEqual([
      'gadgets.0.upstreams.by: "env" is not an attribute of this playbook (known: host)',
      "gadgets.0.title: a gadget with upstreams names {{upstream}} in its title, so that its instances are told apart",
      "gadgets.0.actions.0.title: an action of a gadget with upstreams names {{upstream}} in its title, so that each upstream's findings cite their own action",
      "mitigations.0.toolName: placeholder {{upstream}} is bound only in a gadget or a mitigation that declares upstreams",
    ]);

    // A mitigation may declare upstreams too: it then names {{upstream}}, by an attribute of the playbook.
    const mitigations = (upstreams: string, name: string) =>
      `${playbook("p", { extra: `mitigations:\n  - toolName: Runbook\n    customName: "${name}"\n    upstreams: ${upstreams}\n    url: "https://runbooks.example/db?name={{upstream}}"` })}\n`;
    const loaded = await configDir({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": mitigations("{ by: host, lists: { web-1: [orders-db] } }", "Raise max_connections on {{upstream}}"),
    });
    expect((await loadConfig(loaded)).organizations.get("acme")?.playbooks.get("p")?.mitigations[0]?.upstreams).toEqual({
      by: "host",
      lists: { "web-1": ["orders-db"] },
    });
    const unnamed = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": mitigations("{ by: env, lists: { prod: [orders-db] } }", "Raise max_connections"),
    });
    expect(unnamed.problems.map((problem) => `${problem.path}: ${problem.message}`)).toEqual([
      'mitigations.0.upstreams.by: "env" is not an attribute of this playbook (known: host)',
      "mitigations.0.customName: a mitigation with upstreams names {{upstream}} in its name, so that each upstream's is told apart",
    ]);

    const lists = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": `${playbook("p")}\n${upstreamGadget("Upstream {{upstream}}", "up of {{upstream}}", '[orders, orders, "a b"]')}\n`,
    });
    expect(lists.problems.map((problem) => `${problem.path}: ${problem.message}`)).toEqual([
      "gadgets.1.upstreams.2: must be a service name (letters, digits, '.', '_' and '-', starting with a letter or digit)",
      "gadgets.1.upstreams: each upstream once",
    ]);
  });

  it("refuses a query placeholder written inside the author's quotes", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": playbook("p", {
        action: `      - title: up
        dataSource: prom
        prometheus: { query: 'up{instance="{{host}}"}' }`,
      }),
    });
    expect(error.problems.map((problem) => `${problem.path}: ${problem.message}`)).toEqual([
      "gadgets.0.actions.0.prometheus.query: placeholder {{host}} is inside a string literal: write it without quotes (each value becomes a string literal of its own)",
    ]);
  });

  it("checks monitor names: not blank, no filter, no two with the same shape in an organization", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/a.yaml": playbook("a", { monitorNames: '["High CPU on {{host}}", "  ", "x {{host|regex}}", "a\\u0007b", "nul\\0 {{host}}"]' }),
      "playbooks/acme/b.yaml": playbook("b", { monitorNames: '["high  cpu ON {{ node }}"]', extra: "optionalAttributes: [host]" }),
    });
    expect(error.problems.map((problem) => `${problem.file} ${problem.path}: ${problem.message}`)).toEqual([
      "playbooks/acme/a.yaml monitorNames.1: a monitor name must not be blank",
      "playbooks/acme/a.yaml monitorNames.2: a monitor name placeholder takes no |filter: it captures text from the title",
      "playbooks/acme/a.yaml monitorNames.3: a monitor name must not contain control characters",
      "playbooks/acme/a.yaml monitorNames.4: a monitor name must not contain control characters",
      'playbooks/acme/b.yaml monitorNames.0: monitor name "high  cpu ON {{ node }}" matches the same titles as the one in playbooks/acme/a.yaml at monitorNames.0',
    ]);
  });

  it("refuses a URL template whose host could come from a value", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": playbook("p", {
        extra: `mitigations:
  - { toolName: a, url: "https://{{host}}/dashboard" }
  - { toolName: b, url: "{{host}}" }
  - { toolName: c, url: "https://grafana.example{{host}}" }
  - { toolName: d, url: "/relative/{{host}}" }
  - { toolName: e, url: "ftp://files.example/x" }
  - { toolName: ok, url: "https://grafana.example/d/x?var-host={{host}}" }
  - { toolName: ok2, url: "https://grafana.example?var-host={{host}}" }`,
      }),
    });
    expect(error.problems.map((problem) => problem.path)).toEqual([
      "mitigations.0.url",
      "mitigations.1.url",
      "mitigations.2.url",
      "mitigations.3.url",
      "mitigations.4.url",
    ]);
    expect(error.problems[0]?.message).toMatch(/scheme and host come before any placeholder/);
  });

  it("refuses a URL template whose own text leaves the path it fixes, which would fail every run", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": playbook("p", {
        action: `      - title: above
        dataSource: status
        http: { path: "/{{host}}/../../admin", answerField: v, link: "https://status.example/s/{{host}}/../../x" }
      - title: literal
        dataSource: status
        http: { path: "/../admin", answerField: v }
      - title: ok
        dataSource: status
        http: { path: "/a/../{{host}}/status", answerField: v, link: "https://status.example/s/{{host}}?back=/../x" }`,
        extra: `mitigations:
  - { toolName: a, url: "https://grafana.example/d/{{host}}/../.." }
  - { toolName: ok, url: "https://grafana.example/a/../d/{{host}}" }`,
      }),
    });
    expect(error.problems.map((problem) => `${problem.path}: ${problem.message}`)).toEqual([
      "gadgets.0.actions.0.http.path: must stay under the data source's URL: a .. segment takes the request above it",
      "gadgets.0.actions.0.http.link: a .. segment after the first placeholder takes the URL out of the path before it",
      "gadgets.0.actions.1.http.path: must stay under the data source's URL: a .. segment takes the request above it",
      "mitigations.0.url: a .. segment after the first placeholder takes the URL out of the path before it",
    ]);
  });

  it("reports schema problems with field and line, unknown fields at the field itself", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": `name: p
monitorNames: ["p {{host}}"]
windw: { before: 1h }
gadgets:
  - title: g
    actions:
      - title: a
        dataSource: prom
        prometheus:
          query: 42
      - title: b
        dataSource: prom
        promethues: { query: up }
`,
    });
    expect(error.problems).toEqual([
      { file: "playbooks/acme/p.yaml", path: "gadgets.0.actions.0.prometheus.query", line: 10, message: "Invalid input: expected string, received number" },
      {
        file: "playbooks/acme/p.yaml",
        path: "gadgets.0.actions.1",
        line: 11,
        message: "an action needs exactly one query key: prometheus or http or datadog or loki or elasticsearch or alertmanager or kubernetes",
      },
      { file: "playbooks/acme/p.yaml", path: "windw", line: 3, message: 'unknown field "windw"' },
    ]);
  });

  it("reports an invalid data source of an organization", async () => {
    const error = await loadError({
      "organizations/acme.yaml": `id: acme
clientIds: []
dataSources:
  prom:
    type: prometheus
    url: ftp://x
  logs:
    type: splunk
    url: http://x
`,
    });
    expect(error.problems.map((problem) => `${problem.path} (${problem.line})`)).toEqual(["dataSources.prom.url (6)", "dataSources.logs.type (8)"]);
  });

  it("loads an organization's Slack app and incident tools, with their defaults", async () => {
    const dir = await configDir({
      "organizations/acme.yaml": `${acme}slack:
  botToken: { env: ACME_SLACK_TOKEN }
  allowedHosts: [Acme.Enterprise.Slack.com]
incidentTools:
  pagerduty: { apiToken: { env: ACME_PAGERDUTY_TOKEN }, from: oncall@acme.example }
  opsgenie: { apiKey: { file: /run/secrets/opsgenie }, apiUrl: "https://api.eu.opsgenie.com" }
`,
      "organizations/globex.yaml": "id: globex\nclientIds: []\nslack: { botToken: { env: GLOBEX_SLACK }, apiUrl: 'http://127.0.0.1:9/api' }\n",
    });
    const catalog = await loadConfig(dir);
    expect(catalog.organizations.get("acme")).toMatchObject({
      slack: { botToken: { env: "ACME_SLACK_TOKEN" }, apiUrl: "https://slack.com/api/", allowedHosts: ["acme.enterprise.slack.com"] },
      incidentTools: {
        pagerduty: { apiToken: { env: "ACME_PAGERDUTY_TOKEN" }, from: "oncall@acme.example", apiUrl: "https://api.pagerduty.com" },
        opsgenie: { apiKey: { file: "/run/secrets/opsgenie" }, apiUrl: "https://api.eu.opsgenie.com" },
      },
    });
    // The Web API URL ends with a slash, as the Slack client joins method names to it.
    expect(catalog.organizations.get("globex")?.slack?.apiUrl).toBe("http://127.0.0.1:9/api/");
    expect(catalog.organizations.get("globex")?.incidentTools).toBeUndefined();
  });

  it("loads an organization's Microsoft Teams account, with Graph's and the token service's URLs by default", async () => {
    const dir = await configDir({
      "organizations/acme.yaml": `${acme}teams:
  tenantId: contoso.onmicrosoft.com
  clientId: 11111111-2222-3333-4444-555555555555
  clientSecret: { env: ACME_TEAMS_SECRET }
  refreshToken: { file: /run/secrets/teams-refresh-token }
  alertChannelId: 0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0/19:pages@thread.tacv2
`,
      "organizations/globex.yaml": `id: globex
clientIds: []
teams:
  tenantId: 0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0
  clientId: 11111111-2222-3333-4444-555555555555
  clientSecret: { env: GLOBEX_TEAMS_SECRET }
  refreshToken: { env: GLOBEX_TEAMS_REFRESH }
  graphUrl: http://127.0.0.1:9/v1.0
  loginUrl: http://localhost:9
`,
    });
    const catalog = await loadConfig(dir);
    expect(catalog.organizations.get("acme")?.teams).toEqual({
      tenantId: "contoso.onmicrosoft.com",
      clientId: "11111111-2222-3333-4444-555555555555",
      clientSecret: { env: "ACME_TEAMS_SECRET" },
      refreshToken: { file: "/run/secrets/teams-refresh-token" },
      graphUrl: "https://graph.microsoft.com/v1.0/",
      loginUrl: "https://login.microsoftonline.com/",
      alertChannelId: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0/19:pages@thread.tacv2",
    });
    expect(catalog.organizations.get("globex")?.teams).toMatchObject({ graphUrl: "http://127.0.0.1:9/v1.0/", loginUrl: "http://localhost:9/" });
  });

  it("refuses Teams secrets written in the file, plain http to another host, and a Slack channel as the Teams alert channel", async () => {
    const error = await loadError({
      "organizations/acme.yaml": `${acme}teams:
  tenantId: "contoso tenant"
  clientId: my-app
  clientSecret: written-in-the-file
  refreshToken: { env: ACME_TEAMS_REFRESH }
  graphUrl: http://graph.example/v1.0
  loginUrl: ftp://login.example
  alertChannelId: C0PAGES
`,
    });
    expect(error.problems.map((problem) => problem.path)).toEqual([
      "teams.tenantId",
      "teams.clientId",
      "teams.clientSecret",
      "teams.graphUrl",
      "teams.loginUrl",
      "teams.alertChannelId",
    ]);
    expect(error.message).not.toContain("written-in-the-file");
  });

  it("loads an organization's limits, and refuses limits that are not positive whole numbers or unknown", async () => {
    const dir = await configDir({
      "organizations/acme.yaml": `${acme}limits: { executionsInFlight: 50, itemsQueued: 20000 }\n`,
      "organizations/globex.yaml": "id: globex\nclientIds: []\nlimits: { itemsQueued: 10 }\n",
    });
    const catalog = await loadConfig(dir);
    expect(catalog.organizations.get("acme")?.limits).toEqual({ executionsInFlight: 50, itemsQueued: 20_000 });
    expect(catalog.organizations.get("globex")?.limits).toEqual({ itemsQueued: 10 });

    const error = await loadError({ "organizations/acme.yaml": `${acme}limits: { executionsInFlight: 0, itemsQueued: 1.5, queued: 3 }\n` });
    expect(error.problems.map((problem) => problem.path).sort()).toEqual(["limits.executionsInFlight", "limits.itemsQueued", "limits.queued"]);
  });

  it("refuses a Slack token written in the file, a host with a scheme, a tool without its email, and empty incidentTools", async () => {
    const error = await loadError({
      "organizations/acme.yaml": `${acme}slack:
  botToken: xoxb-written-in-the-file
  allowedHosts: ["https://acme.slack.com"]
incidentTools:
  pagerduty: { apiToken: { env: PD } }
`,
      "organizations/globex.yaml": "id: globex\nclientIds: []\nincidentTools: {}\n",
    });
    expect(error.problems.map((problem) => `${problem.file} ${problem.path}`)).toEqual([
      "organizations/acme.yaml slack.botToken",
      "organizations/acme.yaml slack.allowedHosts.0",
      "organizations/acme.yaml incidentTools.pagerduty.from",
      "organizations/globex.yaml incidentTools",
    ]);
    expect(error.message).not.toContain("xoxb-written-in-the-file");
  });

  it("names file and line of a YAML syntax error", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "playbooks/acme/p.yaml": "name: p\ngadgets:\n  - title: x\n   actions: []\n",
      "playbooks/acme/q.yaml": "name: q\n\tgadgets: []\n",
    });
    expect(error.message.split("\n")).toEqual([
      "config error in playbooks/acme/p.yaml: YAML syntax error: Sequence item without - indicator (line 4)",
      "config error in playbooks/acme/q.yaml: YAML syntax error: Tabs are not allowed as indentation (line 2)",
    ]);
  });

  it("refuses duplicate keys and empty files", async () => {
    const error = await loadError({
      "organizations/acme.yaml": `${acme}id: acme\n`,
      "organizations/globex.yaml": "",
    });
    expect(error.problems.map((problem) => `${problem.file}: ${problem.message}`)).toEqual([
      "organizations/acme.yaml: YAML syntax error: Map keys must be unique",
      "organizations/globex.yaml: the file is empty",
    ]);
  });

  it("refuses a config directory without organizations", async () => {
    const empty = await configDir({ "README.md": "nothing here" });
    await expect(loadConfig(empty)).rejects.toThrow("config error in organizations: folder not found");
    const noFiles = await configDir({ "organizations/README.md": "nothing here" });
    await expect(loadConfig(noFiles)).rejects.toThrow("config error in organizations: no organization files: add organizations/<orgId>.yaml");
  });

  it("collects the problems of every file, not only the first", async () => {
    const error = await loadError({
      "organizations/acme.yaml": acme,
      "organizations/bad.yaml": "id: bad\n",
      "playbooks/acme/a.yaml": playbook("a", { action: "      - title: x\n        dataSource: nope\n        prometheus: { query: up }" }),
      "playbooks/acme/b.yaml": "name: [",
      "playbooks/bad/c.yaml": playbook("c"),
      "playbooks/stray.yaml": playbook("d"),
    });
    expect(error.problems.map((problem) => problem.file)).toEqual([
      "organizations/bad.yaml",
      "playbooks/acme/b.yaml",
      "playbooks/bad",
      "playbooks/stray.yaml",
      "playbooks/acme/a.yaml",
    ]);
    expect(error.message.split("\n")).toHaveLength(5);
  });

  it("ignores files that are not YAML and hidden files", async () => {
    const dir = await configDir({
      "organizations/acme.yaml": acme,
      "organizations/.acme.yaml.swp": "garbage: [",
      "playbooks/acme/README.md": "# notes",
      "playbooks/acme/p.yml": playbook("p"),
    });
    expect((await loadConfig(dir)).organizations.get("acme")?.playbookList.map((item) => item.name)).toEqual(["p"]);
  });
});
