import { describeIssues, type ValidationIssue } from "@pes/contracts";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { ToolError, type PesService } from "../pes-service.js";

/** What a tool is: its name and words for the model, its contracts, and what it does with the service. */
export interface ToolDeclaration<Input extends z.ZodObject, Output extends z.ZodObject> {
  name: string;
  title: string;
  /** Written for a model choosing among the tools: when to use it, what it needs, what it returns. */
  description: string;
  /** A contract of packages/contracts (or an object holding them), parsed as the HTTP API parses it. */
  input: Input;
  /** A contract of packages/contracts (or an object holding them), as the HTTP API answers it. */
  output: Output;
  /** True for a tool that only reads: a client may call it without asking its user. */
  readOnly: boolean;
  run(service: PesService, input: z.output<Input>): Promise<z.output<Output>>;
}

/** How a tool reports what it did not expect (a bug, a lost connection): to the server's log, never to the model. */
export type UnexpectedErrorReport = (error: unknown, tool: string) => void;

/** A tool ready to serve: its declaration's types are kept inside. */
export interface PesTool {
  name: string;
  /** What `tools/list` shows of it. */
  listing: Tool;
  /** Answers a `tools/call` of it: its arguments parsed with its input contract, then run. */
  call(service: PesService, args: unknown, report: UnexpectedErrorReport): Promise<CallToolResult>;
}

export const INTERNAL_ERROR = "Internal server error";

/**
 * Declares a tool. Its answer is the structured output and the same JSON as text (for clients that read
 * only text); a refusal is a tool error with the HTTP API's words, arguments that do not fit the contract
 * one with its issues, as the HTTP API words a 400's.
 */
export function defineTool<Input extends z.ZodObject, Output extends z.ZodObject>(declaration: ToolDeclaration<Input, Output>): PesTool {
  return {
    name: declaration.name,
    listing: {
      name: declaration.name,
      title: declaration.title,
      description: declaration.description,
      inputSchema: objectSchema(declaration.input, "input"),
      outputSchema: objectSchema(declaration.output, "output"),
      annotations: { title: declaration.title, readOnlyHint: declaration.readOnly, openWorldHint: false },
    },
    async call(service, args, report) {
      const parsed = declaration.input.safeParse(args ?? {});
      if (!parsed.success) return failure(describeIssues(issuesOf(parsed.error)));
      try {
        const output = await declaration.run(service, parsed.data);
        return { content: [{ type: "text", text: JSON.stringify(output) }], structuredContent: output };
      } catch (error) {
        if (error instanceof ToolError) return failure(error.message);
        report(error, declaration.name);
        return failure(INTERNAL_ERROR);
      }
    },
  };
}

/**
 * A contract as JSON Schema (draft-07, which the SDK's client validates with), as the OpenAPI document
 * shows it: a part JSON Schema cannot say (a custom check, a transform) is left open, as the document
 * leaves it. A contract with an id comes out as a `$ref` to its definition; MCP wants the object itself at
 * the root, so the definition is put there (the definitions stay beside it, for the references inside).
 */
function objectSchema(schema: z.ZodObject, io: "input" | "output"): Tool["inputSchema"] {
  const { $schema: _dialect, $ref, ...json } = z.toJSONSchema(schema, { target: "draft-7", io, unrepresentable: "any" });
  const definitions = jsonObject(json.definitions);
  const root = $ref?.startsWith(DEFINITIONS) === true ? jsonObject(definitions?.[$ref.slice(DEFINITIONS.length)]) : json;
  if (root?.type !== "object") throw new Error(`a tool's ${io} must be an object schema`);
  const properties = Object.entries(jsonObject(root.properties) ?? {}).map(([name, property]) => {
    // A property's schema may be `true` (anything) in JSON Schema, where MCP's type wants an object: `{}` says the same.
    const object = jsonObject(property) ?? (property === false ? { not: {} } : {});
    return [name, object] as const;
  });
  return { ...root, ...(definitions === undefined ? {} : { definitions }), type: "object", properties: Object.fromEntries(properties) };
}

function jsonObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? { ...value } : undefined;
}

const DEFINITIONS = "#/definitions/";

function issuesOf(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({ path: issue.path.map(String), message: issue.message }));
}

function failure(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}
