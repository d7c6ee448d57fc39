import type { AnyActionRequest, Observed } from "@pes/connectors";
import type { AuditQuery } from "@pes/contracts";
import type { Plan } from "./plan.js";
import type { PlanRunner } from "./run.js";

const REDACTED = "[redacted]";

/** Keys whose value is a credential wherever they appear in a query (a header a query spelled out). */
const CREDENTIAL_KEY = /^(authorization|proxy-authorization|cookie|x-api-key|api[-_]?key|apikey|password|passwd|secret|token|access[-_]?token)$/i;
/** The userinfo of a URL (`https://user:pass@host`): a credential. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;

/**
 * A runner that hands every query it runs to `sent` as the audit trail keeps it (auditedQuery), with its
 * action, gadget, data source and window: each fetch the execution made, its look-back's included, in
 * the order they ended. An action that could not be filled (no query) sent nothing and is not recorded.
 */
export function recordingQueries(runner: PlanRunner, plan: Plan, sent: AuditQuery[]): PlanRunner {
  const byPrepared = new Map(plan.actions.flatMap((action) => (typeof action.prepared === "string" ? [] : [[action.prepared, action] as const])));
  return {
    ...runner,
    run: async (request: AnyActionRequest): Promise<Observed> => {
      const observed = await runner.run(request);
      if (observed.query !== undefined) {
        const planned = byPrepared.get(request.action);
        sent.push({
          action: request.title,
          ...(planned === undefined ? {} : { gadget: planned.gadgetTitle, dataSource: planned.definition.dataSource, connector: planned.connector }),
          query: auditedQuery(observed.query, observed.redact),
          window: { start: request.window.start.toISOString(), end: request.window.end.toISOString() },
          observation: observed.observation.kind,
        });
      }
      return observed;
    },
  };
}

/**
 * A query as the audit trail keeps it: as sent, with the data source's secrets (`redact`), the
 * credentials of any URL in it and the value of any credential-named key replaced by `[redacted]`.
 */
export function auditedQuery(query: unknown, redact: (text: string) => string): unknown {
  return JSON.parse(JSON.stringify(query), (key, item: unknown) => {
    if (key !== "" && CREDENTIAL_KEY.test(key)) return REDACTED;
    return typeof item === "string" ? redact(item).replace(URL_CREDENTIALS, `$1${REDACTED}@`) : item;
  });
}
