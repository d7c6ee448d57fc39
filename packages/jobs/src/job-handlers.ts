import type { AwaitedJobDeclaration, AwaitedPayload, JobDeclaration, JobOptions } from "./job-declarations.js";

/** What a handler gets besides its payload. */
export interface JobContext {
  /**
   * Aborts when the job should stop: its caller's deadline passed, its attempt timed out, or the worker is
   * shutting down (the job is then handed back to the queue). The handler should return soon after.
   */
  signal: AbortSignal;
  jobId: string;
  /** 1 for the first run, 2 for the first retry, and so on. */
  attempt: number;
}

/** One job type a worker runs: its declaration with the handler bound to its parsed payload. */
export interface JobHandler {
  readonly name: string;
  readonly queue: string;
  readonly options: JobOptions;
  /** Set for a job a caller waits for: what the caller calls it in errors ("execution"). */
  readonly awaitedAs?: string;
  /** Parses a payload with the declaration's schema: a run of the handler on it, or what is wrong with it. */
  accept(data: unknown): { run(context: JobContext): Promise<object | undefined> } | { problems: string[] };
}

/** The jobs a worker process runs. */
export type JobHandlers = readonly JobHandler[];

/**
 * Pairs a declaration with its handler, for a worker's handlers. A handler is short: it calls plain
 * functions. For a job a caller waits for, its value is the reply.
 */
export function handleJob<Payload extends AwaitedPayload, Reply extends object>(
  declaration: AwaitedJobDeclaration<Payload, Reply>,
  handler: (payload: Payload, context: JobContext) => Promise<Reply>,
): JobHandler;
export function handleJob<Payload>(
  declaration: JobDeclaration<Payload>,
  handler: (payload: Payload, context: JobContext) => Promise<void>,
): JobHandler;
export function handleJob<Payload>(
  declaration: JobDeclaration<Payload> & { readonly reply?: { readonly label: string } },
  // biome-ignore lint/suspicious/noConfusingVoidType: the implementation of both overloads: a reply, or none
  handler: (payload: Payload, context: JobContext) => Promise<object | void>,
): JobHandler {
  const { name, queue, options, schema } = declaration;
  return {
    name,
    queue,
    options,
    ...(declaration.reply === undefined ? {} : { awaitedAs: declaration.reply.label }),
    accept(data) {
      const parsed = schema.safeParse(data);
      if (!parsed.success) {
        return { problems: parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`) };
      }
      const payload = parsed.data;
      return { run: async (context) => (await handler(payload, context)) ?? undefined };
    },
  };
}
