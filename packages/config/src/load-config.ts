import type { Dirent } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { connectorRegistry, type ConnectorRegistry, type DataSource } from "@pes/connectors/schemas";
import type { Playbook } from "@pes/contracts";
import { createMonitorNameMatcher, playbookDefinitionSchema, type PlaybookDefinition } from "@pes/playbooks";
import type { z } from "zod";
import type { Catalog, OrganizationCatalog } from "./catalog.js";
import { ConfigError, type ConfigProblem } from "./config-error.js";
import { organizationFileSchema, type OrganizationFile } from "./organization-file.js";
import { checkPlaybooks, type LoadedPlaybook } from "./playbook-checks.js";
import { schemaProblems } from "./schema-problems.js";
import { teamProblems } from "./team-access.js";
import { parseYaml, type YamlFile } from "./yaml-file.js";
import { redactionPolicyOf } from "./redaction-settings.js";
import { errorMessage } from "@pes/contracts";

const YAML_EXTENSION = /\.ya?ml$/;

/**
 * Loads and validates CONFIG_DIR:
 * - `organizations/<orgId>.yaml`: one OrganizationFile per organization;
 * - `playbooks/<orgId>/*.yaml`: one PlaybookDefinition per file.
 * Files are read in name order (`.yaml` or `.yml`; other files are ignored), which is also the order of
 * `GET /playbook` and the tie-break order of monitor-name matching.
 * Data sources and actions are checked against `connectors` (default: the stock connectors).
 * @throws ConfigError listing every problem of every file, each naming the file, the field and the line.
 */
export async function loadConfig(dir: string, options: { connectors?: ConnectorRegistry } = {}): Promise<Catalog> {
  const connectors = options.connectors ?? connectorRegistry;
  const OrganizationFile = organizationFileSchema(connectors);
  const PlaybookDefinition = playbookDefinitionSchema(connectors);
  const loader = new Loader(dir, connectors.types);

  const organizationFiles = await loader.listYamlFiles("organizations", { required: true });
  const organizations = new Map<string, { file: string; value: OrganizationFile }>();
  for (const file of organizationFiles) {
    const value = await loader.read(file, OrganizationFile);
    if (value === undefined) continue;
    const stem = stemOf(file);
    if (value.id !== stem) {
      loader.report(file, ["id"], `id "${value.id}" must equal the file name "${stem}"`);
      continue;
    }
    const previous = organizations.get(value.id);
    if (previous !== undefined) {
      loader.report(file, undefined, `organization "${value.id}" is already defined in ${previous.file}`);
      continue;
    }
    organizations.set(value.id, { file, value });
  }
  if (organizationFiles.length === 0 && loader.problems.length === 0) {
    loader.report("organizations", undefined, "no organization files: add organizations/<orgId>.yaml");
  }

  const playbooksByOrg = new Map<string, LoadedPlaybook[]>();
  for (const entry of await loader.list("playbooks", { required: false })) {
    const at = `playbooks/${entry.name}`;
    if (!entry.isDirectory()) {
      if (YAML_EXTENSION.test(entry.name)) {
        loader.report(at, undefined, "playbook files go in playbooks/<orgId>/, one folder per organization");
      }
      continue;
    }
    if (!organizations.has(entry.name)) {
      const invalid = organizationFiles.some((file) => stemOf(file) === entry.name);
      loader.report(
        at,
        undefined,
        invalid
          ? `the playbooks of organization "${entry.name}" are checked once its organization file is valid`
          : `organization "${entry.name}" has no organization file organizations/${entry.name}.yaml`,
      );
      continue;
    }
    const loaded: LoadedPlaybook[] = [];
    for (const file of await loader.listYamlFiles(at, { required: false })) {
      const definition = await loader.read(file, PlaybookDefinition);
      if (definition !== undefined) loaded.push({ file, definition });
    }
    playbooksByOrg.set(entry.name, loaded);
  }

  for (const [id, { file, value }] of organizations) {
    const dataSources = new Map<string, DataSource>(Object.entries(value.dataSources));
    for (const problem of checkPlaybooks(playbooksByOrg.get(id) ?? [], file, dataSources, connectors)) {
      loader.report(problem.file, problem.path, problem.message);
    }
    for (const problem of teamProblems(playbooksByOrg.get(id) ?? [], dataSources)) loader.report(problem.file, problem.path, problem.message);
  }
  if (loader.problems.length > 0) throw new ConfigError(loader.problems);

  const catalog = new Map<string, OrganizationCatalog>();
  for (const [id, { value }] of organizations) {
    const definitions = (playbooksByOrg.get(id) ?? []).map((playbook) => playbook.definition);
    catalog.set(id, {
      id,
      clientIds: new Set(value.clientIds),
      dataSources: new Map<string, DataSource>(Object.entries(value.dataSources)),
      playbooks: new Map(definitions.map((definition) => [definition.name, definition])),
      playbookList: definitions.map(toPlaybook),
      matcher: createMonitorNameMatcher(definitions),
      ...(value.slack === undefined ? {} : { slack: value.slack }),
      ...(value.teams === undefined ? {} : { teams: value.teams }),
      ...(value.incidentTools === undefined ? {} : { incidentTools: value.incidentTools }),
      ...(value.limits === undefined ? {} : { limits: value.limits }),
      ...(value.evidence === undefined ? {} : { evidence: value.evidence }),
      redaction: redactionPolicyOf(value.redaction),
      ...(value.memory === undefined ? {} : { memory: value.memory }),
      ...(value.budget === undefined ? {} : { budget: value.budget }),
    });
  }
  return { organizations: catalog };
}

/** `GET /playbook`'s element: requiredAttributes only when the playbook declares some. */
function toPlaybook(definition: PlaybookDefinition): Playbook {
  const playbook: Playbook = { name: definition.name, monitorNames: [...definition.monitorNames] };
  if (definition.requiredAttributes !== undefined && definition.requiredAttributes.length > 0) {
    playbook.requiredAttributes = [...definition.requiredAttributes];
  }
  return playbook;
}

/** Reads files under the config directory and collects the problems of all of them. */
class Loader {
  readonly problems: ConfigProblem[] = [];
  /** Parsed files, to give problems found by later checks a line number. */
  private readonly parsed = new Map<string, YamlFile>();

  constructor(
    private readonly dir: string,
    /** The action query keys, for schema problems of actions. */
    private readonly queryKeys: readonly string[],
  ) {}

  report(file: string, path: readonly PropertyKey[] | undefined, message: string, line?: number): void {
    const problem: ConfigProblem = { file, message };
    if (path !== undefined && path.length > 0) problem.path = path.map(String).join(".");
    const at = line ?? (path === undefined ? undefined : this.parsed.get(file)?.lineOf(path));
    if (at !== undefined) problem.line = at;
    this.problems.push(problem);
  }

  /** Entries of a folder, sorted by name; a missing optional folder is empty. */
  async list(folder: string, { required }: { required: boolean }): Promise<Dirent[]> {
    try {
      const entries = await readdir(join(this.dir, folder), { withFileTypes: true });
      return entries.filter((entry) => !entry.name.startsWith(".")).sort((a, b) => compare(a.name, b.name));
    } catch (error) {
      if (isNotFound(error) && !required) return [];
      this.report(folder, undefined, isNotFound(error) ? "folder not found" : `cannot read the folder: ${errorMessage(error)}`);
      return [];
    }
  }

  /** The YAML files of a folder, as paths relative to the config directory. */
  async listYamlFiles(folder: string, options: { required: boolean }): Promise<string[]> {
    const entries = await this.list(folder, options);
    return entries.filter((entry) => entry.isFile() && YAML_EXTENSION.test(entry.name)).map((entry) => `${folder}/${entry.name}`);
  }

  /** Reads, parses and validates one file; undefined (with its problems reported) when it is not valid. */
  async read<T>(file: string, schema: z.ZodType<T>): Promise<T | undefined> {
    let text: string;
    try {
      text = await readFile(join(this.dir, file), "utf8");
    } catch (error) {
      this.report(file, undefined, `cannot read the file: ${errorMessage(error)}`);
      return undefined;
    }
    const parsed = parseYaml(text);
    if (!parsed.ok) {
      for (const error of parsed.errors) this.report(file, undefined, `YAML syntax error: ${error.message}`, error.line);
      return undefined;
    }
    this.parsed.set(file, parsed.file);
    if (parsed.file.value === null || parsed.file.value === undefined) {
      this.report(file, undefined, "the file is empty");
      return undefined;
    }
    const result = schema.safeParse(parsed.file.value);
    if (result.success) return result.data;
    for (const problem of schemaProblems(result.error.issues, parsed.file.value, this.queryKeys)) {
      this.report(file, problem.path, problem.message);
    }
    return undefined;
  }
}

function stemOf(file: string): string {
  return (file.split("/").at(-1) ?? file).replace(YAML_EXTENSION, "");
}

/** Code-unit order: the same on every machine, whatever its locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isNotFound(error: unknown): boolean {
  return error instanceof Error && "code" in error && error.code === "ENOENT";
}
