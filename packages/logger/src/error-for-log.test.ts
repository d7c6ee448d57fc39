import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./index.js";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ name: "logger-test", destination }), lines };
}

describe("a thrown value logged as err", () => {
  it("keeps its type, message, stack, causes and code, and nothing else it carries", () => {
    const { logger, lines } = capture();
    const refused = Object.assign(new Error("WRONGPASS invalid username-password pair", { cause: new Error("the socket's") }), {
      code: "WRONGPASS",
      command: { name: "auth", args: ["default", "hunter2"] },
    });
    logger.warn({ err: refused }, "redis connection error");
    const [line] = lines;
    expect(line?.err).toEqual({
      type: "Error",
      message: "WRONGPASS invalid username-password pair: the socket's",
      stack: expect.stringContaining("caused by: Error: the socket's"),
      code: "WRONGPASS",
    });
    expect(JSON.stringify(line)).not.toContain("hunter2");
  });

  it("leaves a value that is not an Error as it is", () => {
    const { logger, lines } = capture();
    logger.warn({ err: "closed" }, "queue error");
    expect(lines[0]?.err).toBe("closed");
  });
});
