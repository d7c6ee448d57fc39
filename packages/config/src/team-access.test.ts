import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "./config-error.js";
import { loadConfig } from "./load-config.js";
import { executionTeams, mayRun, organizationFor, organizationRunningFor, ownerTeams, visibleTo } from "./team-access.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function load(files: Record<string, string>) {
  const dir = await mkdtemp(join(tmpdir(), "pes-teams-"));
  dirs.push(dir);
  for (const [file, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), content);
  }
  return loadConfig(dir);
}

const organization = `id: acme
clientIds: [cli]
dataSources:
  prom: { type: prometheus, url: "http://127.0.0.1:9090" }
  ledger: { type: prometheus, url: "http://127.0.0.1:9091", teams: [payments] }
`;

function playbook(name: string, dataSource: string, teams?: string): string {
  return `name: ${name}
monitorNames: ["${name} on {{host}}"]
${teams === undefined ? "" : `teams: ${teams}\n`}gadgets:
  - title: Gadget
    actions:
      - { title: up, dataSource: ${dataSource}, prometheus: { query: up } }
`;
}

const files = {
  "organizations/acme.yaml": organization,
  "playbooks/acme/a-open.yaml": playbook("open", "prom"),
  "playbooks/acme/b-ledger.yaml": playbook("ledger", "ledger"),
  "playbooks/acme/c-shared.yaml": playbook("shared", "ledger", "[payments, search]"),
  "playbooks/acme/d-search.yaml": playbook("search", "prom", "[search]"),
  "playbooks/acme/e-both.yaml": playbook("both", "prom", "[payments, search]"),
};

const member = (...teams: string[]) => ({ teams, orgAdmin: false });
const admin = { teams: [], orgAdmin: true };

describe("who sees an object", () => {
  it("shows an object to a caller of one of its teams, to the admin, and an object of no team to callers of no team", () => {
    expect(visibleTo(member("payments"), ["payments"])).toBe(true);
    expect(visibleTo(member("search", "payments"), ["payments"])).toBe(true);
    expect(visibleTo(member("search"), ["payments"])).toBe(false);
    expect(visibleTo(member(), ["payments"])).toBe(false);
    expect(visibleTo(admin, ["payments"])).toBe(true);
    expect(visibleTo(member(), [])).toBe(true);
    expect(visibleTo(member("search"), [])).toBe(false);
    // Written before teams: as an object of no team.
    expect(visibleTo(member(), undefined)).toBe(true);
    expect(visibleTo(member("search"), undefined)).toBe(false);
  });
});

describe("who may run a playbook", () => {
  it("narrows a playbook's teams by those of every data source it reads", async () => {
    const org = (await load(files)).organizations.get("acme");
    if (org === undefined) throw new Error("no acme");
    const names = (caller: { teams: string[]; orgAdmin: boolean }) => [...organizationFor(caller, org).playbooks.keys()];
    expect(names(member("payments"))).toEqual(["open", "ledger", "shared", "both"]);
    // shared names search, but reads ledger, which only payments may read.
    expect(names(member("search"))).toEqual(["open", "search", "both"]);
    expect(names(member())).toEqual(["open"]);
    expect(names(admin)).toEqual(["open", "ledger", "shared", "search", "both"]);
    // The list and the matcher are the same view.
    const searchView = organizationFor(member("search"), org);
    expect(searchView.playbookList.map((playbook) => playbook.name)).toEqual(["open", "search", "both"]);
    expect(searchView.matcher.match("ledger on db-1")).toBeUndefined();
    expect(org.matcher.match("ledger on db-1")?.bookName).toBe("ledger");
    // One view per set of playbooks, whoever asks.
    expect(organizationFor(member("search"), org)).toBe(searchView);
    expect(organizationFor(member("search", "nobody"), org)).toBe(searchView);
    expect(organizationFor(admin, org)).toBe(org);
  });

  it("runs an execution for the caller's teams the playbook allows, and an admin's for the teams it allows", async () => {
    const org = (await load(files)).organizations.get("acme");
    if (org === undefined) throw new Error("no acme");
    expect(executionTeams(member("search", "payments"), org, "open")).toEqual(["payments", "search"]);
    expect(executionTeams(member("search", "payments"), org, "shared")).toEqual(["payments"]);
    expect(executionTeams(member(), org, "open")).toEqual([]);
    expect(executionTeams(admin, org, "both")).toEqual(["payments", "search"]);
    expect(executionTeams({ teams: ["search"], orgAdmin: true }, org, "ledger")).toEqual(["payments"]);
    expect(mayRun(member("search"), ["payments"])).toBe(false);
    expect(mayRun(member(), undefined)).toBe(true);
    expect(ownerTeams(member("b", "a", "a"), undefined)).toEqual(["a", "b"]);
  });

  it("identifies a chat message's playbook only among those that run for exactly the execution's teams", async () => {
    const org = (await load(files)).organizations.get("acme");
    if (org === undefined) throw new Error("no acme");
    const names = (teams: string[]) => [...organizationRunningFor(teams, org).playbooks.keys()];
    expect(names(["payments"])).toEqual(["open", "ledger", "shared", "both"]);
    expect(names(["payments", "search"])).toEqual(["open", "both"]);
    expect(names([])).toEqual(["open"]);
  });
});

describe("configuration", () => {
  it("refuses an empty teams list, and a playbook no team may run, naming the file and the field", async () => {
    const error: unknown = await load({
      "organizations/acme.yaml": organization.replace("ledger: {", 'empty: { type: prometheus, url: "http://127.0.0.1:9092", teams: [] }\n  ledger: {'),
    }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.map(({ file, path }) => ({ file, path }));
    expect(problems).toEqual([{ file: "organizations/acme.yaml", path: "dataSources.empty.teams" }]);

    const nobody: unknown = await load({ "organizations/acme.yaml": organization, "playbooks/acme/a.yaml": playbook("nobody", "ledger", "[search]") }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(nobody).toBeInstanceOf(ConfigError);
    expect((nobody as ConfigError).problems.map(({ file, path }) => ({ file, path }))).toEqual([{ file: "playbooks/acme/a.yaml", path: "teams" }]);
  });
});
