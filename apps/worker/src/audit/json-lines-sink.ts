import { appendFile } from "node:fs/promises";
import type { AuditRecord } from "@pes/contracts";

/** Appends audit records to a file, one JSON line each, for a log pipeline to ship (AUDIT_LOG_FILE). */
export interface JsonLinesSink {
  write(record: AuditRecord): Promise<void>;
}

/**
 * A sink appending to `path` (created when missing, never truncated). The lines of this process are
 * written one after the other, each in one append, so that lines never interleave; several processes
 * may share the file (O_APPEND), a line at a time.
 */
export function jsonLinesSink(path: string): JsonLinesSink {
  let last: Promise<void> = Promise.resolve();
  return {
    write(record) {
      const line = `${JSON.stringify(record)}\n`;
      const written = last.then(() => appendFile(path, line, { encoding: "utf8", mode: 0o600 }));
      // The next line waits for this one whatever became of it; its caller is told of a failure.
      last = written.catch(() => {});
      return written;
    },
  };
}
