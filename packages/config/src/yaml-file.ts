import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from "yaml";
import { errorMessage } from "@pes/contracts";

/** A YAML file parsed once: its plain value and a way back from a field path to a line. */
export interface YamlFile {
  value: unknown;
  lineOf(path: readonly PropertyKey[]): number | undefined;
}

export type YamlParseResult = { ok: true; file: YamlFile } | { ok: false; errors: { message: string; line?: number }[] };

/**
 * Parses one YAML document (YAML 1.2 core schema: `on`/`yes` stay strings; duplicate keys are errors;
 * aliases are bounded, so a small file cannot expand into a huge one).
 */
export function parseYaml(text: string): YamlParseResult {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.map((error) => ({ message: error.message, line: lineCounter.linePos(error.pos[0]).line })),
    };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return { ok: false, errors: [{ message: errorMessage(error) }] };
  }
  return { ok: true, file: { value, lineOf: (path) => lineOf(doc, lineCounter, path) } };
}

/** The line of the deepest node on `path` that exists (a missing field points at its parent). */
function lineOf(doc: Document, lineCounter: LineCounter, path: readonly PropertyKey[]): number | undefined {
  let node: unknown = doc.contents;
  let offset = rangeStart(node);
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(key));
      if (pair === undefined) break;
      offset = rangeStart(pair.key) ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof key === "number") {
      const item: unknown = node.items[key];
      if (item === undefined) break;
      offset = rangeStart(item) ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return offset === undefined ? undefined : lineCounter.linePos(offset).line;
}

function rangeStart(node: unknown): number | undefined {
  if (node === null || typeof node !== "object" || !("range" in node)) return undefined;
  const range: unknown = node.range;
  return Array.isArray(range) && typeof range[0] === "number" ? range[0] : undefined;
}
