import { existsSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { applyPatch as applyOperations, type Operation, validate as validateOperations } from "fast-json-patch";
import { parse, parseAllDocuments } from "yaml";

/**
 * A Kubernetes object as a manifest holds it. Fields beyond these are checked by the schemas
 * (kubernetes-schemas.ts), not here.
 */
export interface Resource {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** A kustomization this check cannot build, or one kustomize would refuse; the message names the file. */
export class KustomizeError extends Error {
  override name = "KustomizeError";
}

/**
 * Builds a kustomization folder as `kustomize build` does, for the fields this repository's
 * kustomizations use: resources, components, namespace, images, configMapGenerator, secretGenerator,
 * and patches in JSON 6902 form (applied with fast-json-patch). No Go toolchain or kustomize binary is
 * reachable from the machines this project is built on, so the check does the build itself, and refuses
 * any other field rather than ignoring it. Generated names get no hash suffix: references keep the plain
 * name, which is as consistent for a check (test/e2e/kubernetes.test.ts compares with `kubectl
 * kustomize` where kubectl is installed).
 */
export async function kustomizeBuild(dir: string): Promise<Resource[]> {
  return build(dir, "Kustomization");
}

const SUPPORTED = new Set(["apiVersion", "kind", "resources", "components", "namespace", "images", "configMapGenerator", "secretGenerator", "patches"]);
/** Kinds that live outside any namespace, so the namespace transformer leaves them be. */
const CLUSTER_SCOPED = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "PriorityClass", "StorageClass"]);

interface Generator {
  name: string;
  envs?: string[];
  files?: string[];
  literals?: string[];
}

interface Patch {
  target?: { kind?: string; name?: string };
  patch?: string;
  path?: string;
}

interface Image {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  resources?: string[];
  components?: string[];
  namespace?: string;
  images?: Image[];
  configMapGenerator?: Generator[];
  secretGenerator?: Generator[];
  patches?: Patch[];
}

async function readKustomization(dir: string, kind: "Kustomization" | "Component"): Promise<{ file: string; spec: Kustomization }> {
  const file = join(dir, "kustomization.yaml");
  if (!existsSync(file)) throw new KustomizeError(`${dir} has no kustomization.yaml`);
  const spec = parse(await readFile(file, "utf8")) as Kustomization;
  for (const field of Object.keys(spec)) {
    if (!SUPPORTED.has(field)) throw new KustomizeError(`${file}: "${field}" is not a field this check builds (${[...SUPPORTED].join(", ")})`);
  }
  const expected = kind === "Component" ? "kustomize.config.k8s.io/v1alpha1" : "kustomize.config.k8s.io/v1beta1";
  if (spec.kind !== kind || spec.apiVersion !== expected) {
    throw new KustomizeError(`${file}: expected apiVersion ${expected} and kind ${kind}, found ${spec.apiVersion} ${spec.kind}`);
  }
  return { file, spec };
}

async function build(dir: string, kind: "Kustomization" | "Component", accumulated: Resource[] = []): Promise<Resource[]> {
  const { file, spec } = await readKustomization(dir, kind);
  const resources = kind === "Component" ? accumulated : [];

  for (const entry of spec.resources ?? []) {
    const path = join(dir, entry);
    if (!existsSync(path)) throw new KustomizeError(`${file}: resource ${entry} does not exist`);
    if (statSync(path).isDirectory()) resources.push(...(await build(path, "Kustomization")));
    else resources.push(...(await readResources(path)));
  }
  for (const component of spec.components ?? []) {
    const path = join(dir, component);
    if (!existsSync(path)) throw new KustomizeError(`${file}: component ${component} does not exist`);
    await build(path, "Component", resources);
  }
  for (const generator of spec.configMapGenerator ?? []) {
    resources.push({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: generator.name }, data: await generate(dir, file, generator) });
  }
  for (const generator of spec.secretGenerator ?? []) {
    const data = Object.fromEntries(Object.entries(await generate(dir, file, generator)).map(([key, value]) => [key, Buffer.from(value).toString("base64")]));
    resources.push({ apiVersion: "v1", kind: "Secret", metadata: { name: generator.name }, type: "Opaque", data });
  }
  for (const patch of spec.patches ?? []) await applyPatch(dir, file, patch, resources);
  for (const image of spec.images ?? []) setImage(image, resources);
  if (spec.namespace !== undefined) {
    for (const resource of resources) if (!CLUSTER_SCOPED.has(resource.kind)) resource.metadata.namespace = spec.namespace;
  }
  assertUnique(file, resources);
  return resources;
}

async function readResources(path: string): Promise<Resource[]> {
  const resources: Resource[] = [];
  for (const document of parseAllDocuments(await readFile(path, "utf8"))) {
    if (document.errors.length > 0) throw new KustomizeError(`${path}: ${document.errors[0]?.message}`);
    const value = document.toJS() as Resource | null;
    if (value === null) continue;
    if (typeof value.apiVersion !== "string" || typeof value.kind !== "string" || typeof value.metadata?.name !== "string") {
      throw new KustomizeError(`${path}: every document needs apiVersion, kind and metadata.name`);
    }
    resources.push(value);
  }
  return resources;
}

/** One KEY=value a line, `#` comments and blank lines skipped, the value taken as written (no quotes removed). */
function parseEnvFile(path: string, text: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const [index, line] of text.split("\n").entries()) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const match = /^([A-Za-z_][A-Za-z0-9_.-]*)=(.*)$/.exec(trimmed);
    if (match?.[1] === undefined || match[2] === undefined) throw new KustomizeError(`${path}:${index + 1}: not KEY=value`);
    entries[match[1]] = match[2];
  }
  return entries;
}

async function generate(dir: string, file: string, generator: Generator): Promise<Record<string, string>> {
  const data: Record<string, string> = {};
  const read = async (entry: string) => {
    const path = join(dir, entry);
    if (!existsSync(path)) throw new KustomizeError(`${file}: ${generator.name} reads ${entry}, which does not exist`);
    return readFile(path, "utf8");
  };
  for (const entry of generator.envs ?? []) Object.assign(data, parseEnvFile(join(dir, entry), await read(entry)));
  for (const entry of generator.files ?? []) {
    const [key, source] = entry.includes("=") ? (entry.split("=", 2) as [string, string]) : [basename(entry), entry];
    data[key] = await read(source);
  }
  for (const literal of generator.literals ?? []) {
    const at = literal.indexOf("=");
    if (at < 1) throw new KustomizeError(`${file}: literal "${literal}" of ${generator.name} is not KEY=value`);
    data[literal.slice(0, at)] = literal.slice(at + 1);
  }
  return data;
}

async function applyPatch(dir: string, file: string, patch: Patch, resources: Resource[]): Promise<void> {
  const source =
    patch.path === undefined
      ? patch.patch
      : await readFile(join(dir, patch.path), "utf8").catch(() => {
          throw new KustomizeError(`${file}: patch ${patch.path} does not exist`);
        });
  const what = patch.path ?? "an inline patch";
  if (source === undefined) throw new KustomizeError(`${file}: a patch needs patch or path`);
  const operations = parse(source) as unknown;
  if (!Array.isArray(operations)) throw new KustomizeError(`${file}: ${what} is not a JSON 6902 patch (a list of operations); this check builds no other kind`);
  const { kind, name } = patch.target ?? {};
  // Kustomize matches a target's name as a whole-string regular expression.
  const matches = resources.filter(
    (resource) => (kind === undefined || resource.kind === kind) && (name === undefined || new RegExp(`^(?:${name})$`).test(resource.metadata.name)),
  );
  if (matches.length === 0) throw new KustomizeError(`${file}: ${what} targets ${kind ?? "any kind"} ${name ?? ""}, which no resource is`);
  for (const resource of matches) {
    const error = validateOperations(operations as Operation[], resource);
    if (error !== undefined) {
      throw new KustomizeError(
        `${file}: ${what} does not apply to ${resource.kind} ${resource.metadata.name}: ${error.name} at ${error.operation?.path ?? "?"}`,
      );
    }
    applyOperations(resource, operations as Operation[], false, true);
  }
}

/** An image reference's name and its `:tag` or `@digest` (a registry's `:port` belongs to the name). */
function splitImage(reference: string): { name: string; suffix: string } {
  const at = reference.indexOf("@");
  if (at >= 0) return { name: reference.slice(0, at), suffix: reference.slice(at) };
  const colon = reference.lastIndexOf(":");
  if (colon > reference.lastIndexOf("/")) return { name: reference.slice(0, colon), suffix: reference.slice(colon) };
  return { name: reference, suffix: "" };
}

function setImage(image: Image, resources: Resource[]): void {
  for (const resource of resources) {
    const pod = (resource.spec as { template?: { spec?: { containers?: { image?: string }[]; initContainers?: { image?: string }[] } } } | undefined)?.template
      ?.spec;
    for (const container of [...(pod?.containers ?? []), ...(pod?.initContainers ?? [])]) {
      if (container.image === undefined) continue;
      const { name, suffix } = splitImage(container.image);
      if (name !== image.name) continue;
      const tag = image.digest !== undefined ? `@${image.digest}` : image.newTag !== undefined ? `:${image.newTag}` : suffix;
      container.image = `${image.newName ?? name}${tag}`;
    }
  }
}

function assertUnique(file: string, resources: Resource[]): void {
  const seen = new Set<string>();
  for (const { kind, metadata } of resources) {
    const id = `${kind} ${metadata.namespace ?? ""}/${metadata.name}`;
    if (seen.has(id)) throw new KustomizeError(`${file}: ${id} is defined twice`);
    seen.add(id);
  }
}
