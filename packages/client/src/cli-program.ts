import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { text } from "node:stream/consumers";
import { replayReport } from "@pes/analysis";
import { DEFAULT_BATCH_MAX_ITEMS, errorMessage, EvidenceBundle, ExpectedVerdict, FeedbackInput, type PlaybookExecutionResult } from "@pes/contracts";
import type { z } from "zod";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { runBatchInChunks } from "./batch-chunks.js";
import { batchIdempotencyKey } from "./batch-idempotency-key.js";
import { createBatchProgress, type OutputStream } from "./batch-progress.js";
import { resumeAndFollow, submitAndFollow, type FollowOptions } from "./cli-async-batch.js";
import { collectAttribute, inputFromFlags, inputsFromJsonLines, UsageError, type RunFlags } from "./cli-inputs.js";
import { ApiError, InvalidResponseError, TimeoutError, UnreachableError } from "./client-errors.js";
import { evaluateConfirmed, renderConfirmedSummary } from "./confirmed-eval.js";
import { renderFeedback } from "./feedback-rendering.js";
import { evaluateCase, readableBundle, renderEvalTable, verdictLine, type EvalCase } from "./evidence-replay.js";
import { httpService } from "./mcp-service.js";
import { createClient, DEFAULT_TIMEOUT_MS, type BatchRequest, type PesClient } from "./pes-client.js";
import { renderAuditPage } from "./audit-rendering.js";
import { renderPlaybooks, renderResult, terminalSafe } from "./result-rendering.js";
import { renderSimilar } from "./similar-rendering.js";

/** What the CLI touches of the process, so that tests run it in-process. */
export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  env: Readonly<Record<string, string | undefined>>;
  stdin: NodeJS.ReadableStream;
  /** How the client waits before a retry or a reconnect; tests replace it to see the waits without spending them. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Exit codes, for shell scripts (`case $? in …`); docs/cli.md lists them too. */
export const ExitCode = {
  ok: 0,
  /** The API answered, and a result (or any batch item) carries `error`. */
  resultError: 1,
  /** Bad flags or input: nothing was sent. */
  usage: 2,
  /** The API answered with an error status (4xx/5xx, retries spent), or a body the contract does not allow. */
  api: 3,
  /** No answer: the API is unreachable or the call's deadline passed. */
  unreachable: 4,
  /** A bug in the CLI itself. */
  internal: 70,
} as const;

export const DEFAULT_URL = "http://localhost:8080";

const EXIT_CODES_HELP = `
Exit codes:
  0  ok
  1  the API answered and a result (or any batch item) carries "error"
  2  usage error: bad flags or input, nothing sent
  3  the API answered with an error status (4xx/5xx) or an unexpected body
  4  the API is unreachable or gave no answer within --timeout

Environment: PES_URL (default ${DEFAULT_URL}), PES_TOKEN.`;

interface GlobalFlags {
  url?: string;
  token?: string;
  output?: "json" | "text";
  timeout?: number;
}

interface FeedbackFlags {
  right?: boolean;
  wrong?: boolean;
  causeKind?: string;
  causeSubject?: string;
  cause?: string;
  resolution?: string;
  show?: boolean;
}

/** The answer the flags give, checked against the contract before anything is sent. */
function feedbackInput(flags: FeedbackFlags): FeedbackInput {
  if (flags.right === flags.wrong) throw new UsageError("say --right or --wrong (one of them)");
  const cause = {
    ...(flags.causeKind === undefined ? {} : { kind: flags.causeKind }),
    ...(flags.causeSubject === undefined ? {} : { subject: flags.causeSubject }),
    ...(flags.cause === undefined ? {} : { text: flags.cause }),
  };
  const parsed = FeedbackInput.safeParse({
    verdict: flags.right === true ? "right" : "wrong",
    ...(Object.keys(cause).length === 0 ? {} : { cause }),
    ...(flags.resolution === undefined ? {} : { resolution: flags.resolution }),
  });
  if (!parsed.success) {
    const flag = (path: readonly PropertyKey[]) =>
      path[0] === "resolution"
        ? "--resolution"
        : path[0] === "cause"
          ? path[1] === "subject"
            ? "--cause-subject"
            : path[1] === "text"
              ? "--cause"
              : "--cause-kind"
          : "--right/--wrong";
    throw new UsageError(parsed.error.issues.map((issue) => `${flag(issue.path)}: ${issue.message}`).join("; "));
  }
  return parsed.data;
}

interface BatchFlags {
  chunk: number;
  live?: boolean;
  channel?: string;
  quiet?: boolean;
  async?: boolean;
  resume?: string;
  out?: string;
  from?: number;
  idempotencyKey?: string;
}

interface AuditFlags {
  execution?: string;
  subject?: string;
  playbook?: string;
  from?: string;
  to?: string;
  limit?: number;
  cursor?: string;
  json?: boolean;
}

/** An ISO 8601 time, as the API wants it (UTC or with its offset). */
function isoInstant(value: string): string {
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) throw new InvalidArgumentError("must be an ISO 8601 time such as 2026-11-21T13:43:00Z");
  return time.toISOString();
}

function positiveInteger(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError("must be a positive integer");
  return Number(value);
}

function nonNegativeInteger(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("must be a non-negative integer");
  return Number(value);
}

function positiveSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || seconds <= 0) throw new InvalidArgumentError("must be a positive number of seconds");
  return seconds;
}

function attribute(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  try {
    return collectAttribute(value, previous);
  } catch (error) {
    throw new InvalidArgumentError(errorMessage(error));
  }
}

/**
 * Runs `pes <argv>` and resolves with the exit code. Results go to stdout (JSON, or text for a person);
 * errors and progress to stderr.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode: number = ExitCode.ok;

  const program = new Command("pes")
    .description("Run playbook investigations through the Playbook Execution Service API.")
    .exitOverride()
    .configureOutput({
      writeOut: (message) => io.stdout.write(message),
      writeErr: (message) => io.stderr.write(message),
    })
    .showHelpAfterError("(run pes --help for usage)")
    .addOption(new Option("--url <url>", `API base URL (env PES_URL, default ${DEFAULT_URL})`))
    .addOption(new Option("--token <token>", "bearer token (env PES_TOKEN, which keeps it out of ps and shell history)"))
    .addOption(new Option("-o, --output <format>", "json, or text for a person (default: text on a terminal, else json)").choices(["json", "text"]))
    .addOption(
      new Option("--timeout <seconds>", `deadline of each request, retries included (default ${DEFAULT_TIMEOUT_MS / 1000})`).argParser(positiveSeconds),
    )
    .addHelpText("after", EXIT_CODES_HELP);

  /** The client and output format for a command, from its flags and the environment. */
  function setUp(command: Command): { client: PesClient; output: "json" | "text" } {
    const flags = command.optsWithGlobals<GlobalFlags>();
    const token = flags.token ?? nonEmpty(io.env.PES_TOKEN);
    if (token === undefined) throw new UsageError("no token: pass --token or set PES_TOKEN");
    const baseUrl = flags.url ?? nonEmpty(io.env.PES_URL) ?? DEFAULT_URL;
    let client: PesClient;
    try {
      const options = {
        baseUrl,
        token,
        ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout * 1000 }),
        ...(io.sleep === undefined ? {} : { sleep: io.sleep }),
      };
      client = createClient(options);
    } catch (error) {
      throw new UsageError(`--url: ${errorMessage(error)}`);
    }
    return { client, output: flags.output ?? (io.stdout.isTTY === true ? "text" : "json") };
  }

  const writeResult = (result: PlaybookExecutionResult, output: "json" | "text") =>
    io.stdout.write(output === "json" ? `${JSON.stringify(result, null, 2)}\n` : renderResult(result));

  program
    .command("playbooks")
    .description("list the playbooks of the token's organization")
    .action(async (_options: unknown, command: Command) => {
      const { client, output } = setUp(command);
      const playbooks = await client.listPlaybooks();
      io.stdout.write(output === "json" ? `${JSON.stringify(playbooks, null, 2)}\n` : renderPlaybooks(playbooks));
    });

  program
    .command("mcp")
    .description("serve the API's tools to an assistant over stdio (Model Context Protocol), for the token's organization")
    .addHelpText("after", "\nThe assistant starts it and speaks JSON-RPC on stdin and stdout; it ends when stdin closes. docs/mcp.md has the configuration.")
    .action(async (_options: unknown, command: Command) => {
      const { client } = setUp(command);
      // Loaded here: the SDK is for this command alone.
      const mcp = await import("@pes/mcp");
      const service = httpService(client, (message) => new mcp.ToolError(message));
      await mcp.serveStdio(service, (error, tool) => io.stderr.write(`pes mcp: ${tool} failed: ${errorMessage(error)}\n`));
    });

  program
    .command("run")
    .description("run one investigation and print its result")
    .option("--book <name>", "playbook to run (bookName)")
    .option("--title <title>", "alert or issue title; finds the playbook by its monitor names")
    .option("--message-link <url>", "link to the chat message describing the issue")
    .option("--time <time>", "when the issue occurred, ISO 8601 (2026-11-21T13:43Z); defaults to now with --book")
    .option("--attr <key=value>", "an attribute of the issue (repeatable)", attribute)
    .option("--details <text>", "additional details about the issue")
    .option("--channel <id>", "chat channel to post the results to (channelId)")
    .option("--live", "send the results to the incident management tool (liveRun)")
    .addHelpText("after", '\nExample:\n  pes run --title "High CPU on web-1" --attr env=prod --time 2026-11-21T13:43Z')
    .action(async (flags: RunFlags, command: Command) => {
      const input = inputFromFlags(flags);
      const { client, output } = setUp(command);
      const result = await client.run(input);
      writeResult(result, output);
      if (result.error !== undefined) exitCode = ExitCode.resultError;
    });

  program
    .command("audit")
    .description("read the organization's audit trail: who asked, which queries, what was sent where (an admin's token)")
    .option("--execution <id>", "the record of one execution, with every query it sent and every request to a service")
    .option("--subject <sub>", "only executions asked for by this subject (the token's sub)")
    .option("--playbook <name>", "only executions of this playbook")
    .option("--from <time>", "only executions finished at or after this time, ISO 8601", isoInstant)
    .option("--to <time>", "only executions finished at or before this time, ISO 8601", isoInstant)
    .option("--limit <n>", "records per page, at most 500 (default 50)", positiveInteger)
    .option("--cursor <id>", "the page after this record (the `next` of the page before)")
    .option("--json", "the page as JSON ({ records, next }) instead of a table")
    .addHelpText("after", "\nExample: which queries an alert caused\n  pes audit --execution <X-Execution-Id or the webhook answer's executionId>")
    .action(async (flags: AuditFlags, command: Command) => {
      const { client } = setUp(command);
      const { json, ...filters } = flags;
      const page = await client.readAudit(filters);
      const asJson = json === true || command.optsWithGlobals<GlobalFlags>().output === "json";
      io.stdout.write(asJson ? `${JSON.stringify(page, null, 2)}\n` : renderAuditPage(page, { details: flags.execution !== undefined }));
    });

  program
    .command("batch")
    .description("run every input of a JSON Lines file (one PlaybookExecutionInput per line; - for stdin)")
    .argument("[file]", "the inputs, one JSON object per line (none with --resume)")
    .addOption(new Option("--chunk <n>", "inputs per request; at most the API's BATCH_MAX_ITEMS").argParser(positiveInteger).default(DEFAULT_BATCH_MAX_ITEMS))
    .option("--channel <id>", "chat channel for the inputs that name none")
    .option("--live", "liveRun for the inputs that do not set it")
    .option("-q, --quiet", "no progress on stderr")
    .option("--async", "submit the whole file as one async batch (up to the API's ASYNC_BATCH_MAX_ITEMS) and follow it")
    .option("--idempotency-key <key>", "with --async: the batch's Idempotency-Key (default: derived from the inputs)")
    .option("--resume <id>", "follow a batch submitted before, by its id, writing its results")
    .option("--out <file>", "with --async or --resume: append the results to this file, after those it already holds")
    .addOption(new Option("--from <n>", "with --async or --resume, on stdout: the index of the first result to write").argParser(nonNegativeInteger))
    .addHelpText(
      "after",
      "\nResults go to stdout in input order: JSON Lines (one result per input), or text with --output text.\n" +
        "Progress goes to stderr: a bar on a terminal; otherwise a line per request, or with --async JSON lines\n" +
        '({"event":"accepted"|"progress"|"reconnecting",…}).\n\n' +
        "Without --async, the file is sent --chunk inputs per request, one request at a time, each request's\n" +
        "results printed as it returns.\n\n" +
        "With --async, the file is one batch the API runs on its own: the batch id is printed on stderr at once,\n" +
        "each result is written as soon as it and every one before it finished, and a dropped connection is\n" +
        "made again (a growing wait, 8 failures in a row at most). The batch's Idempotency-Key is derived from\n" +
        "the inputs, so running the same command again (within the API's retention time) follows the same\n" +
        "batch rather than starting another; --idempotency-key <key> to choose it.\n\n" +
        "Resuming: with --out, the file is the memory: a run appends to it after the complete lines it holds, so\n" +
        "the same command, or --resume <id> --out <file>, picks up where a killed run stopped. On stdout,\n" +
        "--resume <id> writes from the first result unless --from <n> (append with >>). A run that stops\n" +
        "prints the command that resumes it.\n\n" +
        "Examples:\n" +
        "  pes batch --async issues.jsonl --out results.jsonl\n" +
        "  pes batch --resume 4b7c0f3e-… --out results.jsonl\n",
    )
    .action(async (file: string | undefined, flags: BatchFlags, command: Command) => {
      const asyncMode = flags.async === true || flags.resume !== undefined;
      checkBatchFlags(file, flags, command, asyncMode);
      const follow = (output: "json" | "text"): FollowOptions => ({
        stdout: io.stdout,
        stderr: io.stderr,
        output,
        quiet: flags.quiet === true,
        ...(flags.out === undefined ? {} : { out: flags.out }),
        ...(flags.from === undefined ? {} : { from: flags.from }),
      });
      if (flags.resume !== undefined) {
        const { client, output } = setUp(command);
        if (await resumeAndFollow(client, flags.resume, follow(output))) exitCode = ExitCode.resultError;
        return;
      }

      const source = file === undefined || file === "-" ? "stdin" : file;
      let content: string;
      try {
        content = file === undefined || file === "-" ? await text(io.stdin) : await readFile(file, "utf8");
      } catch (error) {
        throw new UsageError(`cannot read ${source}: ${errorMessage(error)}`);
      }
      const inputs = inputsFromJsonLines(content, source);
      const { client, output } = setUp(command);
      if (asyncMode) {
        const request: BatchRequest = { inputList: inputs };
        if (flags.live === true) request.liveRun = true;
        if (flags.channel !== undefined) request.channelId = flags.channel;
        const key = flags.idempotencyKey ?? batchIdempotencyKey(request);
        if (await submitAndFollow(client, request, key, follow(output))) exitCode = ExitCode.resultError;
        return;
      }

      const requests = Math.ceil(inputs.length / flags.chunk);
      const progress = createBatchProgress(io.stderr, inputs.length, requests, flags.quiet === true);
      let done = 0;
      let request = 0;
      progress.update(0, 0);
      try {
        const options = {
          chunkSize: flags.chunk,
          ...(flags.live === true ? { liveRun: true } : {}),
          ...(flags.channel === undefined ? {} : { channelId: flags.channel }),
        };
        for await (const chunk of runBatchInChunks(client, inputs, options)) {
          progress.clear();
          chunk.results.forEach((result, i) => {
            if (output === "json") io.stdout.write(`${JSON.stringify(result)}\n`);
            else io.stdout.write(`--- ${chunk.offset + i + 1}/${inputs.length} ---\n${renderResult(result)}`);
            if (result.error !== undefined) exitCode = ExitCode.resultError;
          });
          done = chunk.done;
          request += 1;
          progress.update(done, request);
        }
        progress.finish();
      } catch (error) {
        progress.finish();
        if (done > 0) io.stderr.write(`pes batch: stopped after ${done} of ${inputs.length} inputs; their results are above\n`);
        throw error;
      }
    });

  program
    .command("replay")
    .description("run an execution's analysis again, offline, from its evidence bundle, and print the verdict")
    .argument("<id|file>", "a bundle file (- for stdin), or an execution id whose bundle the API kept")
    .option("--lenient", "replay what it can of a bundle the analysis cannot read whole (a later version's), instead of refusing it")
    .addHelpText(
      "after",
      "\nThe replay (verdict, mitigations, and whether both are the recorded ones) goes to stdout as JSON;\n" +
        "a line for a person to stderr. Only reading a bundle by id needs the API.",
    )
    .action(async (source: string, flags: { lenient?: boolean }, command: Command) => {
      const read = (await isFileSource(source))
        ? parsedFile(EvidenceBundle, source, source === "-" ? await text(io.stdin) : await readFile(source, "utf8"))
        : await setUp(command).client.readEvidence(source);
      const bundle = readableBundle(source, read, flags.lenient === true, io.stderr);
      const report = replayReport(bundle);
      io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      const recorded =
        report.sameAsRecorded === undefined ? "" : report.sameAsRecorded ? " (as recorded)" : " (differs from the recorded verdict or mitigations)";
      const cut = report.truncated.length;
      const truncated = cut === 0 ? "" : `; ${cut} ${cut === 1 ? "action was" : "actions were"} cut to fit the bundle's cap (truncated)`;
      io.stderr.write(`${terminalSafe(bundle.executionId ?? source)}: ${terminalSafe(verdictLine(report.verdict))}${recorded}${truncated}\n`);
    });

  program
    .command("eval")
    .description("replay every bundle of a folder, or every confirmed execution, and compare each verdict with the one it expects")
    .argument("[folder]", "NAME.bundle.json files, each beside its NAME.expected.json")
    .option("--lenient", "replay what it can of bundles the analysis cannot read whole, instead of refusing them")
    .option("--confirmed", "instead of a folder: the organization's confirmed executions (pes feedback) with a kept bundle, read from the API")
    .option("--since <time>", "with --confirmed: only those confirmed at or after this ISO 8601 time")
    .addHelpText(
      "after",
      '\nNAME.expected.json holds {"conclusion", "cause"?: {"kind", "subject"?, "action"?, "detailPattern"?}, "mitigations"?: [names]}.\n' +
        "With --confirmed, a case expects the confirmed cause: the recorded verdict's own when it was confirmed right, the\n" +
        "actual cause's kind and subject when it was said wrong; the last line gives the rate of right causes.\n" +
        "Prints a table (or the cases as JSON with --output json); exits 1 when any case is wrong. Needs no API without --confirmed.",
    )
    .action(async (folder: string | undefined, flags: { lenient?: boolean; confirmed?: boolean; since?: string }, command: Command) => {
      const json = command.optsWithGlobals<GlobalFlags>().output === "json";
      if (flags.confirmed === true) {
        if (folder !== undefined) throw new UsageError("--confirmed reads the API: give no folder");
        if (flags.since !== undefined && Number.isNaN(Date.parse(flags.since))) throw new UsageError("--since must be an ISO 8601 time");
        const { client } = setUp(command);
        const result = await evaluateConfirmed(
          {
            listConfirmed: (page) => client.listConfirmed(page),
            readBundle: async (executionId) => {
              try {
                return readableBundle(executionId, await client.readEvidence(executionId), flags.lenient === true, io.stderr);
              } catch (error) {
                if (error instanceof ApiError && error.status === 404) return undefined;
                throw error;
              }
            },
          },
          flags.since,
        );
        io.stdout.write(
          json ? `${JSON.stringify(result, null, 2)}\n` : `${result.cases.length === 0 ? "" : renderEvalTable(result.cases)}${renderConfirmedSummary(result)}`,
        );
        if (result.cases.some((item) => !item.ok)) exitCode = ExitCode.resultError;
        return;
      }
      if (folder === undefined) throw new UsageError("missing the folder, or --confirmed");
      if (flags.since !== undefined) throw new UsageError("--since is for --confirmed");
      const cases = await evaluateFolder(folder, flags.lenient === true, io.stderr);
      if (cases.length === 0) throw new UsageError(`no *.bundle.json in ${folder}`);
      io.stdout.write(json ? `${JSON.stringify(cases, null, 2)}\n` : renderEvalTable(cases));
      if (cases.some((item) => !item.ok)) exitCode = ExitCode.resultError;
    });

  program
    .command("feedback")
    .description("say whether an execution's verdict named the right cause, what the cause was and what fixed it")
    .argument("<id>", "the execution id (X-Execution-Id)")
    .option("--right", "the verdict named the right cause")
    .option("--wrong", "it did not (say which was with --cause-kind/--cause-subject or --cause)")
    .option("--cause-kind <kind>", "the actual cause's kind, as verdicts name them (deploy, saturation, oom, upstream…)")
    .option("--cause-subject <subject>", "what the actual cause is about (a deployment, service, node or series)")
    .option("--cause <text>", "the actual cause in words")
    .option("--resolution <text>", "what fixed it")
    .option("--show", "only print the execution's feedback (current answer and history)")
    .addHelpText("after", "\nPrints the execution's feedback after the answer: the current answer and every answer given.")
    .action(async (id: string, flags: FeedbackFlags, command: Command) => {
      const { client, output } = setUp(command);
      const feedback =
        flags.show === true && flags.right !== true && flags.wrong !== true
          ? await client.readFeedback(id)
          : await client.giveFeedback(id, feedbackInput(flags));
      io.stdout.write(output === "json" ? `${JSON.stringify(feedback, null, 2)}\n` : renderFeedback(feedback));
    });

  program
    .command("similar")
    .description("find the past executions most like an execution: what matched and differed, how often, any confirmed cause and fix")
    .argument("<id>", "the execution id (X-Execution-Id)")
    .addHelpText("after", "\nSeen before — verify: a past execution is a lead, not proof. The organization's memory must be on (memory.recall).")
    .action(async (id: string, _options: unknown, command: Command) => {
      const { client, output } = setUp(command);
      const similar = await client.findSimilar(id);
      io.stdout.write(output === "json" ? `${JSON.stringify(similar, null, 2)}\n` : renderSimilar(similar));
    });

  try {
    await program.parseAsync([...argv], { from: "user" });
    return exitCode;
  } catch (error) {
    return reportFailure(error, io.stderr);
  }
}

/** The combinations of `pes batch` flags that mean nothing, refused before anything is read or sent. */
function checkBatchFlags(file: string | undefined, flags: BatchFlags, command: Command, asyncMode: boolean): void {
  if (flags.resume !== undefined) {
    if (file !== undefined) throw new UsageError("--resume follows a batch already submitted: give no input file");
    if (flags.async === true) throw new UsageError("--resume and --async: choose one");
    for (const [given, flag] of [
      [flags.channel !== undefined, "--channel"],
      [flags.live === true, "--live"],
      [flags.idempotencyKey !== undefined, "--idempotency-key"],
    ] as const) {
      if (given) throw new UsageError(`${flag} is for submitting a batch, not for --resume`);
    }
  } else if (file === undefined) {
    throw new UsageError("missing the input file (- for stdin), or --resume <id>");
  }
  if (flags.idempotencyKey !== undefined && !/^[\x20-\x7e]{1,255}$/.test(flags.idempotencyKey)) {
    throw new UsageError("--idempotency-key must be 1-255 printable ASCII characters");
  }
  if (asyncMode) {
    if (command.getOptionValueSource("chunk") === "cli") throw new UsageError("--chunk is for synchronous batches, not with --async or --resume");
    if (flags.out !== undefined && flags.from !== undefined) throw new UsageError("--from is for stdout: with --out, the file's lines say where to resume");
    if (flags.out !== undefined && command.optsWithGlobals<GlobalFlags>().output === "text") throw new UsageError("--out writes JSON lines: no --output text");
  } else {
    for (const [given, flag] of [
      [flags.out !== undefined, "--out"],
      [flags.from !== undefined, "--from"],
      [flags.idempotencyKey !== undefined, "--idempotency-key"],
    ] as const) {
      if (given) throw new UsageError(`${flag} needs --async or --resume`);
    }
  }
}

/** Whether `replay`'s argument names a file (or stdin) rather than an execution id. */
async function isFileSource(source: string): Promise<boolean> {
  if (source === "-") return true;
  try {
    return (await stat(source)).isFile();
  } catch {
    return false;
  }
}

/** A JSON file's content as `schema` reads it, or a usage error naming the file. */
function parsedFile<T>(schema: z.ZodType<T>, file: string, content: string): T {
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch (error) {
    throw new UsageError(`${file}: not JSON (${errorMessage(error)})`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new UsageError(`${file}: ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; ")}`);
  return parsed.data;
}

/** Every case of a folder, in name order: each NAME.bundle.json replayed against its NAME.expected.json. */
async function evaluateFolder(folder: string, lenient: boolean, stderr: OutputStream): Promise<EvalCase[]> {
  let names: string[];
  try {
    names = (await readdir(folder)).filter((name) => name.endsWith(".bundle.json")).sort();
  } catch (error) {
    throw new UsageError(`cannot read ${folder}: ${errorMessage(error)}`);
  }
  const cases: EvalCase[] = [];
  for (const name of names) {
    const base = name.slice(0, -".bundle.json".length);
    const read = async (file: string) => {
      try {
        return await readFile(join(folder, file), "utf8");
      } catch (error) {
        throw new UsageError(`cannot read ${join(folder, file)}: ${errorMessage(error)}`);
      }
    };
    const bundle = readableBundle(join(folder, name), parsedFile(EvidenceBundle, join(folder, name), await read(name)), lenient, stderr);
    const expected = parsedFile(ExpectedVerdict, join(folder, `${base}.expected.json`), await read(`${base}.expected.json`));
    cases.push(evaluateCase(base, bundle, expected));
  }
  return cases;
}

/** Says what went wrong on stderr and picks the exit code. */
function reportFailure(error: unknown, stderr: OutputStream): number {
  if (error instanceof CommanderError) {
    // Commander already printed its message (or the help, or the version, with exit code 0).
    return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  }
  if (error instanceof UsageError) {
    stderr.write(`pes: ${error.message}\n(run pes --help for usage)\n`);
    return ExitCode.usage;
  }
  if (error instanceof ApiError || error instanceof InvalidResponseError) {
    const requestId = error instanceof ApiError && error.requestId !== undefined ? ` (request id ${terminalSafe(error.requestId)})` : "";
    stderr.write(`pes: ${terminalSafe(error.message)}${requestId}\n`);
    return ExitCode.api;
  }
  if (error instanceof UnreachableError || error instanceof TimeoutError) {
    stderr.write(`pes: ${terminalSafe(error.message)}\n`);
    return ExitCode.unreachable;
  }
  stderr.write(`pes: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return ExitCode.internal;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}
