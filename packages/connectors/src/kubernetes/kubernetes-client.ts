import type { z } from "zod";
import type { FetchRequest } from "../connector.js";
import { answeredError } from "../error-answer.js";
import { describeFetchFailure } from "../fetch-failure.js";
import { answerText, MAX_RESPONSE_BYTES } from "../http-client.js";
import { KubernetesStatus } from "./kubernetes-response.js";
import type { KubernetesAction, KubernetesDataSource } from "./schema.js";

export const TARGET = "Kubernetes";

/** Why a request gave nothing usable, in plain words, and the API server's status code when it answered. */
export class Failure {
  constructor(
    readonly reason: string,
    readonly status?: number,
  ) {}
}

/** GETs to the API server with the data source's headers: a JSON answer parsed, or a text answer. */
export interface KubernetesClient {
  /** One GET of JSON: the parsed answer, or a Failure with the API server's Status message. `accept` replaces the Accept header. */
  json<T>(url: string, schema: z.ZodType<T>, accept?: string): Promise<T | Failure>;
  /** One GET of text (a container's log), or a Failure. */
  text(url: string): Promise<string | Failure>;
}

/**
 * The client of one fetch: `headers` (Accept and Authorization) on every request, `signal` (the action's
 * deadline, or an earlier stop) on each; every failure is a Failure, never a throw.
 */
export function kubernetesClient(
  request: FetchRequest<KubernetesDataSource, KubernetesAction>,
  headers: Readonly<Record<string, string>>,
  signal = request.signal,
): KubernetesClient {
  const get = async (url: string, accept: string | undefined) => {
    try {
      const answer = await request.http.request(url, { method: "GET", headers: accept === undefined ? { ...headers } : { ...headers, accept }, signal });
      if (answer.status >= 200 && answer.status <= 299) return answer;
      let json: unknown;
      try {
        json = JSON.parse(answerText(answer.body));
      } catch {
        json = undefined;
      }
      const status = KubernetesStatus.safeParse(json);
      return new Failure(answeredError(TARGET, answer, status.success ? status.data.message : undefined), answer.status);
    } catch (error) {
      return new Failure(describeFetchFailure(error, request.signal, TARGET, MAX_RESPONSE_BYTES));
    }
  };
  return {
    async json(url, schema, accept) {
      const answer = await get(url, accept);
      if (answer instanceof Failure) return answer;
      let json: unknown;
      try {
        json = JSON.parse(answerText(answer.body));
      } catch {
        return new Failure(`${TARGET} answered with something that is not JSON`);
      }
      const parsed = schema.safeParse(json);
      return parsed.success ? parsed.data : new Failure(`${TARGET} answered in a shape this connector does not know`);
    },
    async text(url) {
      // The API server streams a log as text/plain; `*/*` takes whatever it sends.
      const answer = await get(url, "text/plain, */*");
      return answer instanceof Failure ? answer : answerText(answer.body);
    },
  };
}
