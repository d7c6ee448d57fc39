import type { BatchStatus } from "@pes/contracts";
import type { BatchReconnect } from "./batch-results.js";
import { terminalSafe } from "./result-rendering.js";
import { errorMessage } from "@pes/contracts";

/** Where the CLI writes: process.stdout/stderr, or a test's buffer. */
export interface OutputStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** How far a batch is, shown on stderr so that stdout carries only results. */
export interface BatchProgress {
  /** `done` of `total` inputs answered, after `request` of `requests` requests. */
  update(done: number, request: number): void;
  /** Takes the bar off the terminal line before something else is printed there. */
  clear(): void;
  /** Leaves the last state on screen and moves to a new line. */
  finish(): void;
}

const BAR_WIDTH = 30;
const CLEAR_LINE = "\r\u001b[2K";

/**
 * A bar redrawn in place when stderr is a terminal; one plain line per request otherwise (a CI log, a
 * file), so that a long batch shows it is moving without escape codes in the log; nothing when quiet.
 * Updates come once per request, a few per minute at most: no throttling needed.
 */
export function createBatchProgress(stderr: OutputStream, total: number, requests: number, quiet: boolean): BatchProgress {
  if (quiet) return { update() {}, clear() {}, finish() {} };
  if (stderr.isTTY !== true) {
    return {
      update(done, request) {
        if (request > 0) stderr.write(`pes batch: ${done}/${total} inputs answered (request ${request} of ${requests})\n`);
      },
      clear() {},
      finish() {},
    };
  }
  let drawn = "";
  return {
    update(done) {
      drawn = `pes batch ${bar(done, total)}`;
      stderr.write(`${CLEAR_LINE}${drawn}`);
    },
    clear() {
      if (drawn !== "") stderr.write(CLEAR_LINE);
    },
    finish() {
      if (drawn !== "") stderr.write(`${CLEAR_LINE}${drawn}\n`);
      drawn = "";
    },
  };
}

/** `[####------] 4/10 (40%)` */
function bar(done: number, total: number): string {
  const filled = total === 0 ? BAR_WIDTH : Math.round((done / total) * BAR_WIDTH);
  const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
  return `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${done}/${total} (${percent}%)`;
}

/** How far an async batch is: the API's progress from its event stream, and the results written here. */
export interface AsyncBatchProgress {
  /**
   * The batch was accepted (or found again): its id, the command that resumes this run, and the
   * results written before this run (those an --out file already held).
   */
  accepted(status: BatchStatus, resume: string, written: number): void;
  progress(status: BatchStatus): void;
  /** `count` results written in all, the ones written before a resume included. */
  written(count: number): void;
  reconnecting(reconnect: BatchReconnect): void;
  /** Takes the bar off the terminal line before something else is printed there. */
  clear(): void;
  /** Shows the last state at once and stops. */
  finish(): void;
}

/** Between two JSON lines (and two redraws of the bar): written results come in bursts of a page. */
const JSON_INTERVAL_MS = 1_000;
const REDRAW_INTERVAL_MS = 100;

/**
 * Progress of an async batch on stderr. On a terminal, a bar redrawn in place (done of total, and
 * results written), with a line above it when the connection is being re-made. Otherwise (a CI log, a
 * pipe, a program watching) one JSON object per line: `accepted` with the batch id first, then
 * `progress` (at most one a second, the last state always shown) and `reconnecting`, so that a
 * program can follow the run and resume it. Nothing when quiet.
 */
export function createAsyncBatchProgress(stderr: OutputStream, quiet: boolean): AsyncBatchProgress {
  if (quiet) return { accepted() {}, progress() {}, written() {}, reconnecting() {}, clear() {}, finish() {} };
  const terminal = stderr.isTTY === true;
  let batchId = "";
  let state: BatchStatus | undefined;
  let written = 0;
  let shownAt = 0;
  let pending: NodeJS.Timeout | undefined;
  let shown = "";
  let drawn = false;

  const render = () => {
    clearTimeout(pending);
    pending = undefined;
    if (state === undefined) return;
    const { status, progress } = state;
    const line = terminal
      ? `pes batch ${bar(progress.done, progress.total)} done, ${written} written${progress.failed > 0 ? `, ${progress.failed} failed` : ""}`
      : `${JSON.stringify({ event: "progress", batchId, status, ...progress, written })}\n`;
    if (line === shown && (drawn || !terminal)) return;
    shown = line;
    shownAt = Date.now();
    if (terminal) {
      stderr.write(`${CLEAR_LINE}${line}`);
      drawn = true;
    } else {
      stderr.write(line);
    }
  };
  // At most one line or redraw per interval; a change inside it is shown at its end.
  const changed = () => {
    if (pending !== undefined) return;
    const wait = shownAt + (terminal ? REDRAW_INTERVAL_MS : JSON_INTERVAL_MS) - Date.now();
    if (wait <= 0) render();
    else pending = setTimeout(render, wait);
  };
  const above = (text: string) => {
    if (drawn) stderr.write(CLEAR_LINE);
    stderr.write(text);
    if (drawn) stderr.write(shown);
  };

  return {
    accepted(status, resume, before) {
      batchId = status.id;
      state = status;
      written = before;
      if (terminal) above(`pes batch: batch ${terminalSafe(status.id)}, ${status.progress.total} inputs; if interrupted: ${terminalSafe(resume)}\n`);
      else stderr.write(`${JSON.stringify({ event: "accepted", batchId, total: status.progress.total, resume })}\n`);
      render();
    },
    progress(status) {
      state = status;
      changed();
    },
    written(count) {
      written = count;
      changed();
    },
    reconnecting({ attempt, waitMs, error }) {
      const reason = errorMessage(error);
      if (terminal) above(`pes batch: connection lost (${terminalSafe(reason)}); trying again in ${(waitMs / 1000).toFixed(1)} s (attempt ${attempt})\n`);
      else stderr.write(`${JSON.stringify({ event: "reconnecting", batchId, attempt, waitMs, error: reason })}\n`);
    },
    clear() {
      if (drawn) stderr.write(CLEAR_LINE);
      drawn = false;
    },
    finish() {
      render();
      clearTimeout(pending);
      pending = undefined;
      if (terminal && drawn) stderr.write("\n");
      drawn = false;
    },
  };
}
