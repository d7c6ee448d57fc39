import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "./config-error.js";
import { loadConfig } from "./load-config.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A config directory of organization acme (its `budget` lines) and playbook Book (its own). */
async function configDir(organizationBudget: string, playbookBudget: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "pes-budget-"));
  dirs.push(dir);
  const files = {
    "organizations/acme.yaml": `id: acme
clientIds: [cli]
dataSources:
  status: { type: http, url: "http://127.0.0.1:9099" }
${organizationBudget}`,
    "playbooks/acme/book.yaml": `name: Book
gadgets:
  - title: Status
    actions:
      - { title: status, dataSource: status, http: { path: /status, answerField: state } }
${playbookBudget}`,
  };
  for (const [file, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), content);
  }
  return dir;
}

async function problems(organizationBudget: string, playbookBudget: string): Promise<Array<{ file: string; path?: string }>> {
  const error: unknown = await loadConfig(await configDir(organizationBudget, playbookBudget)).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(error)}`);
  return error.problems.map(({ file, path }) => ({ file, ...(path === undefined ? {} : { path }) }));
}

describe("budgets in the organization and playbook files", () => {
  it("loads an organization's budget with its per-minute budget on data sources, and a playbook's own", async () => {
    const catalog = await loadConfig(
      await configDir(
        "budget: { queries: 40, bytes: 1048576, wallTimeMs: 45000, modelTokens: 6000, dataSourceQueriesPerMinute: 600 }",
        "budget: { queries: 10, wallTimeMs: 20000 }",
      ),
    );
    const acme = catalog.organizations.get("acme");
    expect(acme?.budget).toEqual({ queries: 40, bytes: 1_048_576, wallTimeMs: 45_000, modelTokens: 6_000, dataSourceQueriesPerMinute: 600 });
    expect(acme?.playbooks.get("Book")?.budget).toEqual({ queries: 10, wallTimeMs: 20_000 });
  });

  it("leaves both without a budget when the files set none", async () => {
    const acme = (await loadConfig(await configDir("", ""))).organizations.get("acme");
    expect(acme?.budget).toBeUndefined();
    expect(acme?.playbooks.get("Book")?.budget).toBeUndefined();
  });

  it("refuses a limit that is not a positive whole number, an unknown kind, and a per-minute budget in a playbook, naming file and field", async () => {
    // An organization file with a problem holds back the check of its playbooks ("playbooks/acme").
    expect(await problems("budget: { queries: 0, wallTimeMs: 1.5 }", "")).toEqual([
      { file: "organizations/acme.yaml", path: "budget.queries" },
      { file: "organizations/acme.yaml", path: "budget.wallTimeMs" },
      { file: "playbooks/acme" },
    ]);
    expect(await problems("budget: { querys: 5 }", "")).toEqual([{ file: "organizations/acme.yaml", path: "budget.querys" }, { file: "playbooks/acme" }]);
    expect(await problems("", "budget: { dataSourceQueriesPerMinute: 10 }")).toEqual([
      { file: "playbooks/acme/book.yaml", path: "budget.dataSourceQueriesPerMinute" },
    ]);
    expect(await problems("", "budget: { bytes: -1 }")).toEqual([{ file: "playbooks/acme/book.yaml", path: "budget.bytes" }]);
  });
});
