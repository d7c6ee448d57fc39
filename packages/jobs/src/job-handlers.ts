import type { z } from "zod";
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
  /** Its queue is background work (JobDeclaration.background). */
  readonly background: boolean;
  /** A second queue its jobs come from, background work (JobDeclaration.batchLane). */
  readonly batchLane?: string;
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
export function handleJob<Payload>(declaration: JobDeclaration<Payload>, handler: (payload: Payload, context: JobContext) => Promise<void>): JobHandler;
export function handleJob<Payload>(
  declaration: JobDeclaration<Payload> & { readonly reply?: { readonly label: string } },
  handler: (payload: Payload, context: JobContext) => Promise<unknown>,
): JobHandler {
  return jobHandler(declaration, handler);
}

function jobHandler<Payload>(
  declaration: JobDeclaration<Payload> & { readonly reply?: { readonly label: string } },
  handler: (payload: Payload, context: JobContext) => Promise<unknown>,
): JobHandler {
  const { name, queue, options, schema, batchLane } = declaration;
  return {
    name,
    queue,
    options,
    background: declaration.background === true,
    ...(batchLane === undefined ? {} : { batchLane }),
    ...(declaration.reply === undefined ? {} : { awaitedAs: declaration.reply.label }),
    accept(data) {
      const parsed = schema.safeParse(data);
      if (!parsed.success) {
        return { problems: parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`) };
      }
      const payload = parsed.data;
      return {
        run: async (context) => {
          const value = await handler(payload, context);
          return typeof value === "object" && value !== null ? value : undefined;
        },
      };
    },
  };
}

/** One job of a catalog: its declaration, and for a job a caller waits for, its reply. */
type CatalogEntry = JobDeclaration<unknown> & { readonly reply?: { readonly schema: z.ZodType; readonly label: string } };

/**
 * Every job a worker runs, by its name (BullMQ's job name): its payload schema, queue, batch lane,
 * whether it is background work, its attempts and timeout. Data, read by the producers and the worker.
 */
export type JobCatalog = { readonly [name: string]: CatalogEntry };

/** A catalog as its own keys name its jobs (so that each entry's type is known, never undefined). */
type EntriesOf<Catalog> = { readonly [Name in keyof Catalog]: CatalogEntry };

/**
 * The handler of a catalog's job: its parsed payload in; out, the reply of a job a caller waits for, else
 * nothing.
 */
export type Handler<Entry extends CatalogEntry> = Entry extends { readonly reply: { readonly schema: infer Reply extends z.ZodType } }
  ? (payload: z.output<Entry["schema"]>, context: JobContext) => Promise<z.output<Reply>>
  : (payload: z.output<Entry["schema"]>, context: JobContext) => Promise<void>;

/** A handler for each job of a catalog: one missing does not compile. */
export type CatalogHandlers<Catalog extends EntriesOf<Catalog>> = { readonly [Name in keyof Catalog]: Handler<Catalog[Name]> };

/**
 * A worker's handlers: each job of `catalog` with its handler (which calls plain functions). The runtime
 * parses the payload, applies the job's timeout and deadline to its signal, takes it from its queue and
 * its batch lane, retries as declared and replies to a waiting caller.
 */
export function handleCatalog<Catalog extends EntriesOf<Catalog>>(catalog: Catalog, handlers: CatalogHandlers<Catalog>): JobHandlers {
  const entries: JobHandler[] = [];
  for (const name in catalog) {
    const declaration: CatalogEntry = catalog[name];
    if (declaration.name !== name) throw new Error(`the catalog lists job "${declaration.name}" as "${name}"`);
    // Each handler takes its own job's payload, which the schema beside it parses.
    const handler: ParsedPayloadHandler | undefined = handlers[name];
    // A catalog's handlers are checked when compiled; this is for a caller that was not.
    if (typeof handler !== "function") throw new Error(`no handler for job "${name}" of the catalog`);
    entries.push(jobHandler(declaration, handler));
  }
  return entries;
}

/** A catalog's handler as the runtime calls it, with the payload its entry's schema parsed (method syntax: the payload's type is the entry's). */
type ParsedPayloadHandler = { run(payload: unknown, context: JobContext): Promise<unknown> }["run"];
