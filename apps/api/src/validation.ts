import type { ValidationIssue } from "@pes/contracts";
import type { z } from "zod";
import { AppError } from "./errors.js";

/**
 * Most issues one answer lists. A mistake makes a few; a body of 70,000 unknown fields would otherwise
 * get 70,000 issues back, three times its own size.
 */
export const MAX_LISTED_ISSUES = 20;

/**
 * zod issues as the API's ValidationIssue list, each path prefixed (`["body", ...]`). An unknown-keys
 * issue becomes one issue per key, pointing at the key itself, so a typo is named where it is. Past
 * MAX_LISTED_ISSUES, one last issue at the prefix says how many more there are.
 */
export function toValidationIssues(error: z.ZodError, prefix: readonly string[] = ["body"]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  let unlisted = 0;
  const add = (issue: ValidationIssue) => {
    if (issues.length < MAX_LISTED_ISSUES) issues.push(issue);
    else unlisted += 1;
  };
  for (const issue of error.issues) {
    const path = [...prefix, ...issue.path.map((segment) => String(segment))];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) add({ path: [...path, key], message: `Unknown field "${key}"` });
    } else {
      add({ path, message: issue.message });
    }
  }
  if (unlisted > 0) issues.push({ path: [...prefix], message: `${unlisted} more issues, not listed` });
  return issues;
}

/** Parses `value` with `schema`, or throws the 400 AppError listing every issue under `prefix`. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, prefix: readonly string[] = ["body"]): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new AppError("validation", toValidationIssues(result.error, prefix));
  return result.data;
}

/** Issues with `prefix` put in front of their paths (resolveExecution reports paths without "body"). */
export function prefixIssues(issues: readonly ValidationIssue[], prefix: readonly string[] = ["body"]): ValidationIssue[] {
  return issues.map((issue) => ({ path: [...prefix, ...issue.path], message: issue.message }));
}
