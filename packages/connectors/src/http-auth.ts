import { z } from "zod";
import type { DataSourceSecrets } from "./data-source-secrets.js";
import { basicCredential, SecretRef } from "./secret-ref.js";

/** `Authorization: Bearer <token>`. */
export const BearerAuth = z.strictObject({ bearerToken: SecretRef });
/** `Authorization: Basic <base64(username:password)>`. */
export const BasicAuth = z.strictObject({ basic: z.strictObject({ username: z.string(), password: SecretRef }) });
/** `Authorization: ApiKey <key>`: Elasticsearch's API keys, the `encoded` value it gives (base64 of id:key). */
export const ApiKeyAuth = z.strictObject({ apiKey: SecretRef });
export type HttpAuth = z.infer<typeof BearerAuth> | z.infer<typeof BasicAuth> | z.infer<typeof ApiKeyAuth>;

/**
 * The Authorization header of a data source's `auth`, its secret resolved at start; none without `auth`.
 * @throws Error naming where the secret comes from when it was not resolved.
 */
export function authorizationHeader(auth: HttpAuth | undefined, secrets: DataSourceSecrets): Record<string, string> {
  if (auth === undefined) return {};
  if ("bearerToken" in auth) return { authorization: `Bearer ${secrets.value(auth.bearerToken)}` };
  if ("apiKey" in auth) return { authorization: `ApiKey ${secrets.value(auth.apiKey)}` };
  return { authorization: `Basic ${basicCredential(auth.basic.username, secrets.value(auth.basic.password))}` };
}
