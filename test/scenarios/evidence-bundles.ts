import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { replayReport } from "@pes/analysis";
import type { ExpectedVerdict, PlaybookExecutionResult, VerdictCause } from "@pes/contracts";
import { expect } from "vitest";
import { mitigationNames } from "./answer-checks.js";
import type { RunningScenario } from "./run-scenario.js";

/** The scenarios' evidence bundles, each beside the verdict it expects: what `pes eval` runs over. */
export const BUNDLES_DIR = fileURLToPath(new URL("./bundles/", import.meta.url));

/**
 * Reads the evidence bundle the worker kept of the scenario's investigation through the API, and checks
 * that it replays offline to the verdict and mitigations the service answered, and holds none of the data
 * sources' addresses or the cluster's token. With PES_RECORD_BUNDLES=1, writes it and the verdict it
 * expects to bundles/ (review the diff: the expected verdict is what the scenario's own checks assert).
 */
export async function checkEvidenceBundle(run: RunningScenario, result: PlaybookExecutionResult): Promise<void> {
  const bundle = await run.evidence();
  const replay = replayReport(bundle);
  expect(replay.verdict).toEqual(result.verdict);
  expect(replay.sameAsRecorded).toBe(true);
  // The result's mitigations exactly, but for the link to the Alertmanager's silence form: it holds the
  // data source's address, which no bundle does.
  const alertmanager = new URL(run.urls.alerts).origin;
  const withoutSilenceForms = (result.actionableMitigations ?? []).map(({ url, ...mitigation }) =>
    url === undefined || new URL(url).origin === alertmanager ? mitigation : { ...mitigation, url },
  );
  expect(replay.actionableMitigations).toEqual(withoutSilenceForms);
  expect(replay.unreadable).toEqual([]);
  const text = JSON.stringify(bundle);
  for (const url of Object.values(run.urls)) expect(text).not.toContain(new URL(url).host);
  expect(text).not.toContain(run.cluster.token);

  if (process.env.PES_RECORD_BUNDLES !== "1") return;
  const name = run.scenario.name;
  const { cause, alternative } = result.verdict ?? {};
  const expected: ExpectedVerdict = {
    conclusion: result.verdict?.conclusion ?? "no-cause",
    ...(cause === undefined ? {} : { cause: expectedCause(cause) }),
    ...(alternative === undefined || result.verdict?.conclusion !== "ambiguous" ? {} : { alternative: expectedCause(alternative) }),
    mitigations: mitigationNames(result),
  };
  await mkdir(BUNDLES_DIR, { recursive: true });
  await writeFile(join(BUNDLES_DIR, `${name}.bundle.json`), `${JSON.stringify(bundle)}\n`);
  await writeFile(join(BUNDLES_DIR, `${name}.expected.json`), `${JSON.stringify(expected, null, 2)}\n`);
}

function expectedCause(cause: VerdictCause): NonNullable<ExpectedVerdict["cause"]> {
  return { kind: cause.kind, ...(cause.subject === undefined ? {} : { subject: cause.subject }), action: cause.action };
}
