/**
 * A configured base URL as it may appear in links and messages: without user:password and without a
 * trailing slash, so that `${base}/path` never doubles it.
 */
export function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  parsed.username = "";
  parsed.password = "";
  return parsed.toString().replace(/\/+$/, "");
}

const configuredBases = new WeakMap<{ readonly url: string }, string>();

/**
 * withoutCredentials of a configured data source's (or Grafana's) `url`, computed once per configuration
 * object: the configuration lives as long as the process, and every action would otherwise parse the URL.
 */
export function baseUrlOf(configured: { readonly url: string }): string {
  let base = configuredBases.get(configured);
  if (base === undefined) {
    base = withoutCredentials(configured.url);
    configuredBases.set(configured, base);
  }
  return base;
}
