import type { BatchStatus } from "@pes/contracts";
import { createAsyncBatchProgress, type OutputStream } from "./batch-progress.js";
import { UsageError } from "./cli-inputs.js";
import type { BatchRequest, PesClient } from "./pes-client.js";
import { renderResult } from "./result-rendering.js";
import { openResultFile } from "./result-file.js";
import { errorMessage } from "@pes/contracts";

/** Where and how `pes batch --async` and `--resume` write. */
export interface FollowOptions {
  stdout: OutputStream;
  stderr: OutputStream;
  output: "json" | "text";
  quiet: boolean;
  /** `--out`: a JSON Lines file, continued after the results it already holds. */
  out?: string;
  /** `--from`: the first result to write on stdout. */
  from?: number;
}

/** Where results go: stdout, or a file that remembers how many it holds. */
interface Sink {
  start: number;
  write(text: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * `pes batch --async`: submits the batch under `idempotencyKey` (so that running the same command
 * again finds the same batch) and writes its results in input order as they come. Resolves true when
 * any item ended in an error.
 */
export async function submitAndFollow(client: PesClient, request: BatchRequest, idempotencyKey: string, options: FollowOptions): Promise<boolean> {
  const sink = await openSink(options);
  try {
    outOfRange(sink.start, request.inputList.length, options);
    const status = await client.submitBatch(request, { idempotencyKey });
    return await follow(client, status, sink, options);
  } finally {
    await sink.close();
  }
}

/** `pes batch --resume <id>`: a batch submitted before, its results written from where the last run stopped. */
export async function resumeAndFollow(client: PesClient, batchId: string, options: FollowOptions): Promise<boolean> {
  const sink = await openSink(options);
  try {
    const status = await client.readBatch(batchId, { limit: 0 });
    outOfRange(sink.start, status.progress.total, options);
    return await follow(client, status, sink, options);
  } finally {
    await sink.close();
  }
}

async function openSink({ out, from = 0, stdout }: FollowOptions): Promise<Sink> {
  if (out === undefined) {
    return {
      start: from,
      write: async (text) => {
        stdout.write(text);
      },
      close: async () => {},
    };
  }
  let file: Awaited<ReturnType<typeof openResultFile>>;
  try {
    file = await openResultFile(out);
  } catch (error) {
    throw new UsageError(`cannot open ${out}: ${errorMessage(error)}`);
  }
  return { start: file.lines, write: (text) => file.append(text), close: () => file.close() };
}

function outOfRange(start: number, total: number, { out }: FollowOptions): void {
  if (start <= total) return;
  throw new UsageError(
    out === undefined
      ? `--from ${start} is past the batch's ${total} items`
      : `${out} holds ${start} lines, more than the batch's ${total} items: the results of another batch?`,
  );
}

async function follow(client: PesClient, accepted: BatchStatus, sink: Sink, options: FollowOptions): Promise<boolean> {
  const { stdout, stderr, output, out } = options;
  const total = accepted.progress.total;
  const progress = createAsyncBatchProgress(stderr, options.quiet);
  const resume = (from: number) => resumeCommand(accepted.id, out, from);
  // Results printed on the terminal the bar is on: the bar leaves the line before each.
  const sharesTerminal = out === undefined && stdout.isTTY === true;
  let written = sink.start;
  let last = accepted;
  let anyError = false;
  progress.accepted(accepted, resume(written), written);
  try {
    const results = client.batchResults(accepted.id, {
      from: written,
      onProgress: (status) => {
        last = status;
        progress.progress(status);
      },
      onReconnect: (reconnect) => progress.reconnecting(reconnect),
    });
    for await (const { index, result } of results) {
      if (sharesTerminal) progress.clear();
      await sink.write(output === "json" ? `${JSON.stringify(result)}\n` : `--- ${index + 1}/${total} ---\n${renderResult(result)}`);
      written += 1;
      if (result.error !== undefined) anyError = true;
      progress.written(written);
    }
    progress.finish();
  } catch (error) {
    progress.finish();
    stderr.write(`pes batch: stopped with ${written} of ${total} results written; resume with: ${resume(written)}\n`);
    throw error;
  }
  return anyError || last.progress.failed > 0;
}

/** The command that continues this run where it stands. */
function resumeCommand(batchId: string, out: string | undefined, from: number): string {
  const command = `pes batch --resume ${shellWord(batchId)}`;
  if (out !== undefined) return `${command} --out ${shellWord(out)}`;
  return from > 0 ? `${command} --from ${from}` : command;
}

function shellWord(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
