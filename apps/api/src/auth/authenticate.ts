import type { Catalog, OrganizationCatalog } from "@pes/config";
import { AppError } from "../errors.js";
import type { TokenVerifier } from "./token-verifier.js";

/** Who is calling, established from the token alone: the org never comes from the body or a header. */
export interface Caller {
  orgId: string;
  clientId: string;
  org: OrganizationCatalog;
  /** The token's `sub`, when it has one: who asked. */
  subject: string | undefined;
  /** The teams the token names (AUTH_TEAMS_CLAIM); empty when it names none. */
  teams: readonly string[];
  /** The token grants AUTH_ORG_ADMIN_SCOPE: an admin of its organization. */
  orgAdmin: boolean;
}

const NOT_CONFIGURED = "Client ID is not configured for the organization";

/**
 * Authenticates `Authorization: Bearer <JWT>` and authorizes the caller for its organization: 401 for a
 * missing or bad token, 403 when the org is unknown, has no client IDs (API not enabled), or does not
 * list the calling client.
 */
export async function authenticate(authorization: string | undefined, verifier: TokenVerifier, catalog: Catalog): Promise<Caller> {
  if (authorization === undefined || authorization === "") {
    throw new AppError("unauthenticated", "Missing Authorization header with a Bearer token");
  }
  const match = /^Bearer +([^\s]+) *$/i.exec(authorization);
  const token = match?.[1];
  if (token === undefined) throw new AppError("unauthenticated", "Authorization header must use the Bearer scheme");

  const { orgId, clientId, subject, teams, scopes } = await verifier.verify(token);
  if (orgId === undefined) {
    throw new AppError("unauthenticated", `Invalid token: the ${verifier.orgClaim} claim naming the organization is missing`);
  }
  const org = catalog.organizations.get(orgId);
  if (org === undefined || clientId === undefined || !org.clientIds.has(clientId)) {
    throw new AppError("forbidden", NOT_CONFIGURED);
  }
  return { orgId, clientId, org, subject, teams, orgAdmin: scopes.includes(verifier.orgAdminScope) };
}
