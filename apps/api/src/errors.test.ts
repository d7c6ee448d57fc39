import express from "express";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { errorMiddleware } from "./errors.js";
import { LogCapture } from "./testing/fixtures.js";

/** An app whose one route fails with `error`, answered by the error middleware alone. */
function failingWith(error: unknown, logs: LogCapture) {
  const app = express();
  app.get("/fail", () => {
    throw error;
  });
  app.use(errorMiddleware(logs.logger));
  return app;
}

/** An error as http-errors (body-parser's, raw-body's) makes one: a message for the log, and a status. */
function httpError(message: string, marks: { status?: number; statusCode?: number }): Error {
  return Object.assign(new Error(message), marks, { expose: true, type: "some.library.type" });
}

describe("errorMiddleware", () => {
  it("answers a library's 4xx with the table's status for it and a generic text, not the library's message", async () => {
    const cases = [
      { marks: { status: 413 }, answer: { status: 413, error: "Payload Too Large" } },
      { marks: { statusCode: 415 }, answer: { status: 415, error: "Unsupported Media Type" } },
      { marks: { status: 400 }, answer: { status: 400, error: "Bad Request" } },
      // A 4xx the table does not have is still the caller's mistake.
      { marks: { status: 408 }, answer: { status: 400, error: "Bad Request" } },
    ];
    const logs = new LogCapture();
    const answers = [];
    for (const { marks } of cases) {
      const response = await request(failingWith(httpError("raw-body at /srv/app/node_modules failed on 'secret'", marks), logs)).get("/fail");
      answers.push({ status: response.status, error: response.body.error });
    }
    expect(answers).toEqual(cases.map(({ answer }) => answer));
    expect(logs.text).toEqual([]);
  });

  it("still treats a 5xx status, or a status on a non-Error, as a bug: a generic 500, logged", async () => {
    const logs = new LogCapture();
    const answers = [];
    for (const error of [httpError("stream encoding should not be set", { status: 500 }), { status: 400, message: "not an Error" }]) {
      const response = await request(failingWith(error, logs)).get("/fail");
      answers.push({ status: response.status, body: response.body });
    }
    expect(answers).toEqual([
      { status: 500, body: { error: "Internal server error" } },
      { status: 500, body: { error: "Internal server error" } },
    ]);
    const line = await logs.waitFor((entry) => entry.msg === "unhandled error");
    expect(line).toMatchObject({ err: { message: "stream encoding should not be set" } });
  });
});
