import { Observation, type EvidenceBundle } from "@pes/contracts";

/**
 * The earliest epoch milliseconds a log time may be: 1 March 1973. A time below it is a time in seconds
 * (1 732 872 000 s is November 2024; as milliseconds, 21 January 1970), which would put every line at
 * the epoch, outside any window: refused rather than read as no lines.
 */
const EARLIEST_MS = 1e11;

/**
 * What of a bundle the analysis cannot read, each problem naming its field (`actions[1].observation.kind:
 * …`): an observation of a kind this build does not know (a misspelling, or a later version's), one of a
 * known kind that is not what its schema says (the bundle contract keeps it as it is, so that a reader
 * one version behind is not refused the rest), log times that look like seconds, a window whose
 * instants are out of order. Empty for a bundle the analysis reads whole. A later version's bundle read
 * on purpose may be replayed leniently, its unknown observations as failed actions.
 */
export function bundleProblems(bundle: EvidenceBundle): string[] {
  const known = Observation.options.map((option) => option.shape.kind.value);
  return bundle.actions.flatMap((action, index) => {
    const at = `actions[${index}]`;
    const problems: string[] = [];
    const { start, time, end } = action.window;
    if (!(Date.parse(start) <= Date.parse(time) && Date.parse(time) <= Date.parse(end)))
      problems.push(`${at}.window: start, time and end must be in that order`);
    const { observation } = action;
    if (!(known as readonly string[]).includes(observation.kind)) {
      problems.push(`${at}.observation.kind: "${observation.kind}" is not an observation kind this build reads (${known.join(", ")})`);
      return problems;
    }
    const parsed = Observation.safeParse(observation);
    if (!parsed.success) {
      problems.push(
        ...parsed.error.issues.map(
          (issue) => `${at}.observation${issue.path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("")}: ${issue.message}`,
        ),
      );
      return problems;
    }
    const read = parsed.data;
    if (read.kind === "logs") {
      const seconds = (path: string, value: number) => `${at}.observation.${path}.at: ${value} looks like seconds: log times are epoch milliseconds`;
      for (const [streamIndex, stream] of read.streams.entries()) {
        for (const [lineIndex, line] of stream.lines.entries())
          if (line.at < EARLIEST_MS) problems.push(seconds(`streams[${streamIndex}].lines[${lineIndex}]`, line.at));
      }
      for (const [countIndex, count] of read.counts.entries()) if (count.at < EARLIEST_MS) problems.push(seconds(`counts[${countIndex}]`, count.at));
    }
    return problems;
  });
}
