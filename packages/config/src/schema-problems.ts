import type { z } from "zod";

/** A schema violation at a field of a file. */
export interface FieldProblem {
  path: PropertyKey[];
  message: string;
}

/**
 * Turns zod issues into problems a person editing YAML can act on: an unknown key points at that key,
 * and a union (an action's query, an auth form) reports the alternative that came closest instead of
 * zod's bare "Invalid input". `queryKeys` are the action query keys, one per connector type.
 */
export function schemaProblems(issues: readonly z.core.$ZodIssue[], value: unknown, queryKeys: readonly string[]): FieldProblem[] {
  return issues.flatMap((issue) => problemsOf(issue, [], value, queryKeys));
}

function problemsOf(issue: z.core.$ZodIssue, prefix: PropertyKey[], root: unknown, queryKeys: readonly string[]): FieldProblem[] {
  const path = [...prefix, ...issue.path];
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => ({ path: [...path, key], message: `unknown field "${key}"` }));
  }
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return [{ path, message: issue.message }];

  if (path.at(-2) === "actions") {
    const action = valueAt(root, path);
    const keys = action !== null && typeof action === "object" ? queryKeys.filter((key) => Object.hasOwn(action, key)) : [];
    if (keys.length !== 1) {
      return [{ path, message: `an action needs exactly one query key: ${queryKeys.join(" or ")}` }];
    }
  }
  const sizes = issue.errors.map((branch) => branch.length);
  const fewest = Math.min(...sizes);
  const closest = issue.errors.filter((branch) => branch.length === fewest);
  const [only] = closest;
  if (closest.length === 1 && only !== undefined) return only.flatMap((inner) => problemsOf(inner, path, root, queryKeys));
  const alternatives = issue.errors.map((branch) =>
    branch.map((inner) => (inner.path.length > 0 ? `${inner.path.join(".")}: ${inner.message}` : inner.message)).join(", "),
  );
  return [{ path, message: `matches none of the allowed forms (${alternatives.join(" | ")})` }];
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = Reflect.get(value, key);
  }
  return value;
}
