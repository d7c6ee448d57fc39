import { z } from "zod";

export const ErrorResponse = z.object({ error: z.string() }).meta({ id: "ErrorResponse" });
export type ErrorResponse = z.infer<typeof ErrorResponse>;

export const ValidationIssue = z
  .object({
    path: z.array(z.string()).meta({ description: 'Location of the offending field, starting with "body".' }),
    message: z.string(),
  })
  .meta({ id: "ValidationIssue" });
export type ValidationIssue = z.infer<typeof ValidationIssue>;

/** 400 body: a list of issues, or a string when the body could not be read at all (e.g. not JSON). */
export const ValidationError = z.object({ error: z.union([z.array(ValidationIssue), z.string()]) }).meta({ id: "ValidationError" });
export type ValidationError = z.infer<typeof ValidationError>;
