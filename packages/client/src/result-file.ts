import { open } from "node:fs/promises";

/** A JSON Lines file of results that a later run continues: what is in it says where to resume. */
export interface ResultFile {
  /** The complete lines it held when opened: the results already written. */
  readonly lines: number;
  /** Appends text (whole lines). */
  append(text: string): Promise<void>;
  close(): Promise<void>;
}

const READ_CHUNK = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * Opens (or creates) `path` for appending and counts its complete lines. A last line without its
 * newline is a result a killed run had begun to write: it is cut off, and written again whole.
 */
export async function openResultFile(path: string): Promise<ResultFile> {
  const handle = await open(path, "a+");
  try {
    const buffer = Buffer.alloc(READ_CHUNK);
    let lines = 0;
    let end = 0;
    for (let position = 0; ; ) {
      const { bytesRead } = await handle.read(buffer, 0, READ_CHUNK, position);
      if (bytesRead === 0) break;
      for (let at = buffer.indexOf(NEWLINE, 0); at !== -1 && at < bytesRead; at = buffer.indexOf(NEWLINE, at + 1)) {
        lines += 1;
        end = position + at + 1;
      }
      position += bytesRead;
    }
    if ((await handle.stat()).size > end) await handle.truncate(end);
    return {
      lines,
      async append(text) {
        await handle.appendFile(text);
      },
      close: () => handle.close(),
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}
