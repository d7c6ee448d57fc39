import { access, rm } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { catalogOf, writeConfigDir } from "./config-dir.js";

const dataSources = { metrics: { type: "prometheus", url: "http://127.0.0.1:9" } };
const book = (name: string) => ({ name, gadgets: [{ title: "Latency", actions: [{ title: "p99", dataSource: "metrics", prometheus: { query: "up" } }] }] });

describe("catalogOf", () => {
  it("loads organizations given as objects or YAML text, with their playbooks in the order given", async () => {
    const catalog = await catalogOf({
      organizations: [{ id: "acme", clientIds: ["client-1"], dataSources }, "id: globex\nclientIds: [client-2]\ndataSources: {}\n"],
      playbooks: { acme: Array.from({ length: 12 }, (_, index) => book(`book ${index}`)) },
    });

    expect([...catalog.organizations.keys()]).toEqual(["acme", "globex"]);
    expect(catalog.organizations.get("acme")?.playbookList.map((playbook) => playbook.name)).toEqual(Array.from({ length: 12 }, (_, index) => `book ${index}`));
  });
});

describe("writeConfigDir", () => {
  it("lays the files out as CONFIG_DIR", async () => {
    const dir = await writeConfigDir({ organizations: [{ id: "acme", clientIds: [], dataSources }], playbooks: { acme: [book("Book")] } });
    try {
      await expect(access(join(dir, "organizations", "acme.yaml"))).resolves.toBeUndefined();
      await expect(access(join(dir, "playbooks", "acme", "playbook-000.yaml"))).resolves.toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses an organization without an id, which names its file", async () => {
    await expect(writeConfigDir({ organizations: ["clientIds: []\n"] })).rejects.toThrow(/id/);
  });
});
