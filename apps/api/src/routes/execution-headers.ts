import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { canonicalJson } from "@pes/contracts";
import { z } from "zod";
import { AppError } from "../errors.js";
import type { HeaderDeclaration } from "./responses.js";
import type { ParameterDeclaration } from "./route.js";

/**
 * An Idempotency-Key as the IETF draft (draft-ietf-httpapi-idempotency-key-header) writes it, a quoted
 * structured-field string, or bare as most APIs accept it: 1-255 printable ASCII characters.
 */
const IdempotencyKeyValue = z.string().regex(/^[\x20-\x7e]{1,255}$/, "must be 1-255 printable ASCII characters");

/** The request headers an execution reads, as the OpenAPI document shows them. */
export const executionRequestHeaders: readonly ParameterDeclaration[] = [
  {
    name: "Prefer",
    in: "header",
    description: "`respond-async` (RFC 7240): answer 202 at once, with a Location to read the execution from, instead of waiting for its result.",
    schema: z.string(),
  },
  {
    name: "Cache-Control",
    in: "header",
    description: "`no-cache` (or `no-store`): run an execution of this request's own rather than share an identical one, and let nobody share it.",
    schema: z.string(),
  },
  {
    name: "Idempotency-Key",
    in: "header",
    description:
      "A key of the caller's choosing (1-255 printable ASCII characters, optionally quoted): retried with the same body, within the " +
      "retention time, it gives the same execution rather than starting another; with another body it is a 422. Scoped to the organization.",
    schema: IdempotencyKeyValue,
  },
];

/** The header that names an execution, on every answer about one. */
export const executionIdHeader: Record<string, HeaderDeclaration> = {
  "X-Execution-Id": {
    description: "The execution that answered: the same for every caller that shared it (identical requests, or an Idempotency-Key's retries).",
    schema: z.string(),
  },
};

/** The tokens of a list header (`a, b=1; c`), lowercased, without values or parameters. */
function tokens(value: string | string[] | undefined): string[] {
  const joined = Array.isArray(value) ? value.join(",") : (value ?? "");
  return joined
    .split(",")
    .map((item) => item.split(/[=;]/, 1)[0]?.trim().toLowerCase() ?? "")
    .filter((token) => token !== "");
}

/** True when the caller asked for an answer before the result (`Prefer: respond-async`). */
export function prefersAsync(headers: IncomingHttpHeaders): boolean {
  return tokens(headers.prefer).includes("respond-async");
}

/** False when the caller asked for an execution of its own (`Cache-Control: no-cache` or `no-store`). */
export function mayShare(headers: IncomingHttpHeaders): boolean {
  const directives = tokens(headers["cache-control"]);
  return !directives.includes("no-cache") && !directives.includes("no-store");
}

/** The request's Idempotency-Key, unquoted; a malformed one is a 400 that names the header. */
export function idempotencyKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const header = headers["idempotency-key"];
  if (header === undefined) return undefined;
  // Node joins a header sent twice with ", ": the key is then not what either said, and refused as such.
  const raw = Array.isArray(header) ? header.join(", ") : header;
  const quoted = /^"(.*)"$/.exec(raw);
  const parsed = IdempotencyKeyValue.safeParse(quoted?.[1] ?? raw);
  if (!parsed.success) {
    throw new AppError("validation", [{ path: ["headers", "Idempotency-Key"], message: `Idempotency-Key ${parsed.error.issues[0]?.message}` }]);
  }
  return parsed.data;
}

/**
 * What a retry under the same Idempotency-Key must repeat: the operation and its parsed body, hashed
 * with object keys sorted so that the order a client writes them in does not matter.
 */
export function requestHash(operation: string, body: unknown): string {
  return createHash("sha256").update(operation).update("\n").update(canonicalJson(body)).digest("hex");
}
