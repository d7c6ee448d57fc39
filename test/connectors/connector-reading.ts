import { mapEvidenceText, readObservation, shortAnswer, type Evidence } from "@pes/analysis";
import { connectDataSource, connectorRegistry, prepareAction, resolveSecrets, type DataSourceBase, type TimeWindow } from "@pes/connectors";

/** One run of an action: its title, its window, the attributes and the environment its secrets are read from. */
export interface Run {
  title: string;
  window: TimeWindow;
  attributes?: Record<string, string>;
  env?: Record<string, string>;
}

/**
 * Runs an action as a worker does (the registry's connector for the data source's type, its secrets
 * resolved and its HTTP client built as at start) and reads what it observed as the engine does: the
 * analysis' evidence, the data source's secrets redacted from every text. The whole way from a source's
 * wire format to what a result says, which neither the connectors' tests nor the analysis' see alone.
 */
export async function evidenceOf(dataSource: DataSourceBase & Readonly<Record<string, unknown>>, query: unknown, run: Run): Promise<readonly Evidence[]> {
  const connector = connectorRegistry.get(dataSource.type);
  if (connector === undefined) throw new Error(`no connector for ${dataSource.type}`);
  const { secrets, missing } = resolveSecrets(dataSource, { env: run.env ?? {} });
  if (missing.length > 0) throw new Error(`unresolved secrets: ${missing.map(({ problem }) => problem).join(", ")}`);
  const connection = connectDataSource(dataSource, secrets);
  try {
    const action = prepareAction(connector, dataSource, query, connection);
    const observed = await action.run({ title: run.title, attributes: run.attributes ?? {}, window: run.window, signal: AbortSignal.timeout(20_000) });
    // As the engine reads an action about the paged service: with the attributes.
    const reading = {
      action: run.title,
      window: run.window,
      ...(observed.link === undefined ? {} : { link: observed.link }),
      ...(run.attributes === undefined ? {} : { attributes: run.attributes }),
    };
    return readObservation(observed.observation, reading).map((evidence) => mapEvidenceText(evidence, observed.redact));
  } finally {
    await connection.http.close();
  }
}

/** What a result's action says of each evidence (its short answer) at the window's issue time. */
export function answersOf(found: readonly Evidence[], window: TimeWindow): string[] {
  return found.map((evidence) => shortAnswer(evidence, window.time));
}
