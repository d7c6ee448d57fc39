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
      const filled = total === 0 ? BAR_WIDTH : Math.round((done / total) * BAR_WIDTH);
      const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
      drawn = `pes batch [${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${done}/${total} (${percent}%)`;
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
