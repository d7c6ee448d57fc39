// `pes feedback` and `pes eval --confirmed` in-process against a scripted API: what they send, and what
// they make of what it answers.
import { Readable } from "node:stream";
import { EvidenceBundle } from "@pes/contracts";
import { afterEach, describe, expect, it } from "vitest";
import { ExitCode, runCli } from "./cli-program.js";
import { replayReport } from "./evidence-replay.js";
import { deployBundle } from "./testing/deploy-bundle.js";
import { startScriptedApi, type ScriptedAnswer, type ScriptedApi } from "./testing/scripted-api.js";

const E1 = "0b6f2c7e-1c1a-4f2e-9a63-2f0d8f1e9a01";
const E2 = "1c7a3d8f-2d2b-4a3f-8b74-3a1e9f2fab02";
const E3 = "2d8b4e9a-3e3c-4b4a-9c85-4b2fa03abc03";
const E4 = "3e9c5fab-4f4d-4c5b-8d96-5c3ab14bcd04";
const AT = "2026-11-21T14:30:00.000Z";

class Buffered {
  text = "";
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

let api: ScriptedApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function pes(argv: string[], answers: ScriptedAnswer[]) {
  api = await startScriptedApi(answers);
  const stdout = new Buffered();
  const stderr = new Buffered();
  const code = await runCli(argv, { stdout, stderr, env: { PES_URL: api.url, PES_TOKEN: "env-token" }, stdin: Readable.from([""]) });
  return { code, stdout: stdout.text, stderr: stderr.text, requests: api.requests };
}

const feedbackAnswer = (entries: object[]) => ({ status: 200, body: { executionId: E1, current: entries[entries.length - 1], history: entries } });

describe("pes feedback", () => {
  it("sends the answer its flags say, and prints the execution's feedback", async () => {
    const entry = {
      verdict: "wrong",
      cause: { kind: "deploy", subject: "payments" },
      resolution: "Rolled payments back",
      by: { via: "api", subject: "alice@acme.example" },
      at: AT,
    };
    const { code, stdout, requests } = await pes(
      ["feedback", E1, "--wrong", "--cause-kind", "deploy", "--cause-subject", "payments", "--resolution", "Rolled payments back", "-o", "json"],
      [feedbackAnswer([entry])],
    );
    expect(code).toBe(ExitCode.ok);
    expect(requests.map(({ method, url }) => `${method} ${url}`)).toEqual([`POST /playbook/execution/${E1}/feedback`]);
    expect(JSON.parse(requests[0]?.body ?? "")).toEqual({
      verdict: "wrong",
      cause: { kind: "deploy", subject: "payments" },
      resolution: "Rolled payments back",
    });
    expect(JSON.parse(stdout).current).toEqual(entry);
  });

  it("reads the feedback with --show, and refuses flags that make no answer, sending nothing", async () => {
    const shown = await pes(["feedback", E1, "--show", "-o", "json"], [feedbackAnswer([{ verdict: "right", at: AT }])]);
    expect(shown.code).toBe(ExitCode.ok);
    expect(shown.requests.map(({ method, url }) => `${method} ${url}`)).toEqual([`GET /playbook/execution/${E1}/feedback`]);

    for (const argv of [
      ["feedback", E1],
      ["feedback", E1, "--right", "--wrong"],
      ["feedback", E1, "--right", "--cause-kind", "deploy"],
      ["feedback", E1, "--wrong", "--cause-subject", "payments"],
    ]) {
      const refused = await pes(argv, []);
      expect(refused.code, argv.join(" ")).toBe(ExitCode.usage);
      expect(refused.requests).toEqual([]);
    }
  });

  it("exits 3 when the API answers 404 (another organization's or an unknown execution)", async () => {
    const { code } = await pes(["feedback", E1, "--right"], [{ status: 404, body: { error: "No such execution" } }]);
    expect(code).toBe(ExitCode.api);
  });
});

describe("pes eval --confirmed", () => {
  it("replays each confirmed execution with a kept bundle against its confirmed cause and prints the rate of right causes", async () => {
    // A run's bundle: its recorded verdict is the one the analysis gave (deploy of checkout).
    const bundle = deployBundle();
    const recorded = { ...bundle, verdict: replayReport(EvidenceBundle.parse(bundle)).verdict };
    const confirmed = {
      items: [
        { executionId: E1, feedback: { verdict: "right", at: AT } },
        { executionId: E2, feedback: { verdict: "wrong", cause: { kind: "saturation", subject: "checkout" }, at: AT } },
        { executionId: E3, feedback: { verdict: "wrong", cause: { text: "a bad feature flag" }, at: AT } },
        { executionId: E4, feedback: { verdict: "right", at: AT } },
      ],
    };
    const answers: ScriptedAnswer[] = [
      { status: 200, body: confirmed },
      { status: 200, body: { ...recorded, executionId: E1 } },
      { status: 200, body: { ...recorded, executionId: E2 } },
      { status: 404, body: { error: "No evidence kept for such an execution" } },
    ];
    const json = await pes(["eval", "--confirmed", "--since", "2026-11-01T00:00:00Z", "-o", "json"], answers);
    expect(json.requests.map(({ method, url }) => `${method} ${url}`)).toEqual([
      `GET /playbook/feedback?since=2026-11-01T00%3A00%3A00Z&offset=0&limit=500`,
      `GET /playbook/execution/${E1}/evidence`,
      `GET /playbook/execution/${E2}/evidence`,
      `GET /playbook/execution/${E4}/evidence`,
    ]);
    const result = JSON.parse(json.stdout);
    expect(result.cases.map(({ name, cause }: { name: string; cause: string }) => [name, cause])).toEqual([
      [E1, "right cause"],
      [E2, "wrong cause"],
    ]);
    expect(result.skipped).toEqual([
      { executionId: E3, reason: "no cause to compare" },
      { executionId: E4, reason: "no bundle kept" },
    ]);
    expect(result.rightCauses).toBe(1);
    expect(result.rightCauseRate).toBe(0.5);
    expect(json.code).toBe(ExitCode.resultError);

    const text = await pes(["eval", "--confirmed", "-o", "text"], answers);
    expect(text.stdout.split("\n").slice(-2)).toEqual([
      "confirmed executions: 1/2 right causes (50.0%); 2 confirmed executions skipped (1 no cause to compare, 1 no bundle kept)",
      "",
    ]);
  });

  it("refuses a folder with --confirmed, and --since without it", async () => {
    expect((await pes(["eval", "--confirmed", "some-folder"], [])).code).toBe(ExitCode.usage);
    expect((await pes(["eval", "some-folder", "--since", "2026-11-01T00:00:00Z"], [])).code).toBe(ExitCode.usage);
  });
});
