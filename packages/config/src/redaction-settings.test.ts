import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { BUILT_IN_REDACTION_KINDS } from "@pes/connectors/schemas";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "./config-error.js";
import { loadConfig } from "./load-config.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A config directory with one organization, `redaction` appended to its file. */
async function configWith(redaction: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "pes-config-redaction-"));
  dirs.push(dir);
  const file = join(dir, "organizations/acme.yaml");
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `id: acme\nclientIds: [cli]\n${redaction}`);
  return dir;
}

async function problemsOf(redaction: string) {
  const error: unknown = await loadConfig(await configWith(redaction)).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(error)}`);
  return error.problems.map(({ file, path }) => ({ file, path }));
}

describe("an organization's redaction settings", () => {
  it("turn every built-in kind on when the organization sets none", async () => {
    const catalog = await loadConfig(await configWith(""));
    const policy = catalog.organizations.get("acme")?.redaction;
    expect([...(policy?.detectors ?? [])]).toEqual([...BUILT_IN_REDACTION_KINDS]);
    expect(policy?.patterns).toEqual([]);
    expect(policy?.labels).toEqual([]);
  });

  it("turn off the kinds set false, and keep the organization's patterns and labels", async () => {
    const catalog = await loadConfig(
      await configWith(
        "redaction:\n  detectors: { ipv4: false, ipv6: false }\n  patterns:\n    - { name: employee-id, regex: 'EMP-[0-9]{5}' }\n  labels: [customer]\n",
      ),
    );
    const policy = catalog.organizations.get("acme")?.redaction;
    expect([...(policy?.detectors ?? [])]).toEqual(BUILT_IN_REDACTION_KINDS.filter((kind) => kind !== "ipv4" && kind !== "ipv6"));
    expect(policy?.patterns).toEqual([{ name: "employee-id", regex: "EMP-[0-9]{5}" }]);
    expect(policy?.labels).toEqual(["customer"]);
  });

  it("name the file and field of a pattern that does not compile, can backtrack exponentially or matches an empty text", async () => {
    const problems = await problemsOf(
      "redaction:\n  patterns:\n    - { name: broken, regex: 'a(' }\n    - { name: nested, regex: '(a+)+b' }\n    - { name: empty, regex: 'x*' }\n",
    );
    expect(problems).toEqual([
      { file: "organizations/acme.yaml", path: "redaction.patterns.0.regex" },
      { file: "organizations/acme.yaml", path: "redaction.patterns.1.regex" },
      { file: "organizations/acme.yaml", path: "redaction.patterns.2.regex" },
    ]);
  });

  it("name an unknown kind, a bad pattern name and a bad label name", async () => {
    const problems = await problemsOf("redaction:\n  detectors: { phone: true }\n  patterns:\n    - { name: 'Bad Name', regex: 'x' }\n  labels: ['a b']\n");
    expect(problems.map((problem) => problem.path).sort()).toEqual(["redaction.detectors.phone", "redaction.labels.0", "redaction.patterns.0.name"].sort());
  });
});
