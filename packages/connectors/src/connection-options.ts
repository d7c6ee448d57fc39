import { AllowedTeams } from "@pes/contracts";
import { z } from "zod";
import { SecretRef } from "./secret-ref.js";

/**
 * How the worker's HTTP client reaches one data source over TLS. PEM texts are secret references (an
 * environment variable or a file), resolved once at start like any secret.
 */
export const TlsOptions = z
  .strictObject({
    /** The CA certificates (PEM) this data source's certificate must chain to, instead of the system's. */
    ca: SecretRef.optional(),
    /** A client certificate (PEM) and its key, for a data source that requires mutual TLS. */
    cert: SecretRef.optional(),
    key: SecretRef.optional(),
    /** Accepts any certificate: the connection is encrypted but not authenticated. For test setups only. */
    insecureSkipVerify: z.boolean().default(false),
  })
  .refine((tls) => (tls.cert === undefined) === (tls.key === undefined), { message: "cert and key go together", path: ["cert"] });
export type TlsOptions = z.infer<typeof TlsOptions>;

/**
 * An HTTP(S) proxy for one data source (requests go through it with CONNECT). No credentials in the URL:
 * configuration files hold no secret.
 */
export const ProxyUrl = z
  .url({ protocol: /^https?$/ })
  .refine((url) => new URL(url).username === "" && new URL(url).password === "", "a proxy URL must not hold credentials");

/**
 * How many of this data source's queries may run at once across every worker sharing the Redis; the others
 * wait for a slot within their own deadline. Unset: no limit beyond each worker's MAX_CONCURRENT_ACTIONS.
 */
export const MaxConcurrentQueries = z.number().int().positive().max(10_000);

/** The connection fields every data source may have; each connector's data-source schema spreads them. */
export const connectionFields = {
  tls: TlsOptions.optional(),
  proxy: ProxyUrl.optional(),
  maxConcurrentQueries: MaxConcurrentQueries.optional(),
  /** The teams of the organization whose playbooks may read it (absent: every team); the worker never reads it. */
  teams: AllowedTeams.optional(),
};
