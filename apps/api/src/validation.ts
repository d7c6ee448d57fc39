import type { ValidationIssue } from "@pes/contracts";
import type { z } from "zod";
import { AppError } from "./errors.js";

/**
 * zod issues as the API's ValidationIssue list, each path prefixed (`["body", ...]`). An unknown-keys
 * issue becomes one issue per key, pointing at the key itself, so a typo is named where it is.
 */
export function toValidationIssues(error: z.ZodError, prefix: readonly string[] = ["body"]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const issue of error.issues) {
    const path = [...prefix, ...issue.path.map((segment) => String(segment))];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) issues.push({ path: [...path, key], message: `Unknown field "${key}"` });
    } else {
      issues.push({ path, message: issue.message });
    }
  }
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

/** One line for a batch item's `{ error }`: `time: message; attributes.host: message`. */
export function describeIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`)).join("; ");
}
