import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import type { Catalog } from "../catalog.js";
import { loadConfig } from "../load-config.js";

/** An organization file: an object (written as JSON, which is YAML too) or YAML text, either with its `id`. */
export type OrganizationFileContent = { id: string; [field: string]: unknown } | string;

/** A playbook file: an object (written as JSON) or YAML text. */
export type PlaybookFileContent = object | string;

/** What a test's CONFIG_DIR holds. */
export interface ConfigFiles {
  /** Each one goes to `organizations/<id>.yaml`. */
  organizations: readonly OrganizationFileContent[];
  /**
   * Each organization's playbooks, in `playbooks/<orgId>/`, named so that name order (the order
   * `loadConfig` reads them in) is the order given here.
   */
  playbooks?: Readonly<Record<string, readonly PlaybookFileContent[]>>;
}

/**
 * Writes `files` to a new temporary directory laid out as CONFIG_DIR and returns its path; the caller
 * removes it (a test whose process reads the directory, or that changes a file of it afterwards).
 */
export async function writeConfigDir(files: ConfigFiles): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "pes-config-"));
  await mkdir(join(dir, "organizations"));
  for (const organization of files.organizations) {
    await writeFile(join(dir, "organizations", `${idOf(organization)}.yaml`), textOf(organization));
  }
  for (const [orgId, playbooks] of Object.entries(files.playbooks ?? {})) {
    await mkdir(join(dir, "playbooks", orgId), { recursive: true });
    for (const [index, playbook] of playbooks.entries()) {
      await writeFile(join(dir, "playbooks", orgId, `playbook-${String(index).padStart(3, "0")}.yaml`), textOf(playbook));
    }
  }
  return dir;
}

/**
 * The catalog of `files`, loaded as the API and the worker load CONFIG_DIR (so a test's catalog passes
 * every check theirs does); the temporary directory is gone when it returns.
 * @throws ConfigError as `loadConfig` does.
 */
export async function catalogOf(files: ConfigFiles): Promise<Catalog> {
  const dir = await writeConfigDir(files);
  try {
    return await loadConfig(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function idOf(organization: OrganizationFileContent): string {
  const value: unknown = typeof organization === "string" ? parse(organization) : organization;
  const id = typeof value === "object" && value !== null && "id" in value ? value.id : undefined;
  if (typeof id !== "string") throw new Error("an organization file needs a string id: it names the file");
  return id;
}

function textOf(content: object | string): string {
  return typeof content === "string" ? content : JSON.stringify(content);
}
