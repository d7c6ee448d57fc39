import type { AuditEntryPoint, RequestedBy } from "@pes/contracts";
import type { Caller } from "./auth/authenticate.js";

/**
 * Who asks for an execution and how, for its job (`requestedBy`) and so its audit record: the token's
 * subject, client and teams, and the entry point. Nothing of the token itself.
 */
export function requestedBy(caller: Caller, entry: AuditEntryPoint): RequestedBy {
  return {
    ...(caller.subject === undefined ? {} : { subject: caller.subject }),
    clientId: caller.clientId,
    teams: [...caller.teams],
    entry,
  };
}

/** A URL as an audit record may name it: its origin and path, without credentials or query; undefined when not a URL. */
export function urlWithoutSecrets(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const url = new URL(text);
    return `${url.origin}${url.pathname}`;
  } catch {
    return undefined;
  }
}
