import { describeIssues, ValidationError } from "@pes/contracts";
import type { PesService } from "@pes/mcp";
import { ApiError, InvalidResponseError, TimeoutError, UnreachableError } from "./client-errors.js";
import type { PesClient } from "./pes-client.js";

/**
 * The MCP tools' service for `pes mcp`: the HTTP API, called with the user's token, so that the stdio
 * server needs nothing but the API's address. `refuse` makes the tool error the model reads: the API's
 * own `error` for an error status (the words the HTTP API answers), the client's for no answer.
 */
export function httpService(client: PesClient, refuse: (message: string) => Error): PesService {
  async function answering<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ApiError) throw refuse(apiMessage(error));
      if (error instanceof UnreachableError || error instanceof TimeoutError || error instanceof InvalidResponseError) throw refuse(error.message);
      throw error;
    }
  }

  return {
    listPlaybooks: () => answering(() => client.listPlaybooks()),
    investigate: (input) =>
      answering(async () => {
        const { executionId } = await client.execute(input);
        return client.readExecution(executionId);
      }),
    readExecution: (executionId) => answering(() => client.readExecution(executionId)),
    readEvidence: (executionId) => answering(() => client.readEvidence(executionId)),
    findSimilar: (executionId) => answering(() => client.findSimilar(executionId)),
  };
}

/** The API's `{ error }` as the HTTP API words it: its message, or its issues in a line. */
function apiMessage(error: ApiError): string {
  const parsed = ValidationError.safeParse(error.body);
  if (!parsed.success) return `The API answered ${error.status}`;
  const detail = parsed.data.error;
  return typeof detail === "string" ? detail : describeIssues(detail);
}
