/**
 * `npm run eval -- cloud-opsbench <checkout> --system boutique [--case <category>/<n>] [--out FILE]
 * [--dump-bundles DIR]`: converts each case of a Cloud-OpsBench system into an evidence bundle, replays
 * it through the analysis, maps the verdict to the benchmark's answers and scores them as its
 * evaluation.py does. Prints a table per category and overall.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type CaseResult, listCases, runCase } from "./cloud-opsbench/benchmark-run.js";
import { renderReport, reportRows } from "./cloud-opsbench/report.js";

const usage = `Usage: npm run eval -- cloud-opsbench <checkout> --system <boutique|trainticket> [--case <category>/<n>] [--out FILE] [--dump-bundles DIR]
  <checkout>        a directory holding benchmark/<system>/<category>/<n>/
  --case            run one case
  --out             write one JSON line per case: id, predictions (best first), times
  --dump-bundles    write each converted bundle to DIR/<category>/<n>.json
  --api-only        leave out what the Kubernetes API cannot show: the node services' systemctl status,
                    which the cases record and the adapter otherwise stands in kube-system pods for`;

function main(): number {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      system: { type: "string" },
      case: { type: "string" },
      out: { type: "string" },
      "dump-bundles": { type: "string" },
      "api-only": { type: "boolean" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const [command, checkout] = positionals;
  if (values.help || command !== "cloud-opsbench" || checkout === undefined || values.system === undefined) {
    process.stderr.write(`${usage}\n`);
    return values.help ? 0 : 2;
  }
  const cases = listCases(checkout, values.system, values.case);
  if (values.out !== undefined) writeFileSync(values.out, "");
  const results: CaseResult[] = [];
  for (const ref of cases) {
    const result = runCase(ref, {
      system: values.system,
      apiOnly: values["api-only"] === true,
      ...(values["dump-bundles"] === undefined ? {} : { dumpDir: values["dump-bundles"] }),
    });
    results.push(result);
    if (values.out !== undefined) {
      const line = {
        case: result.id,
        predictions: result.predictions,
        conclusion: result.conclusion,
        ...(result.scores === undefined ? {} : { scores: result.scores }),
        analysisMs: round(result.analysisMs),
        convertMs: round(result.convertMs),
        ...(result.notes.length === 0 ? {} : { notes: result.notes }),
      };
      appendFileSync(values.out, `${JSON.stringify(line)}\n`);
    }
    if (cases.length === 1) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  }
  process.stdout.write(`${renderReport(reportRows(results))}\n`);
  return 0;
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

process.exitCode = main();
