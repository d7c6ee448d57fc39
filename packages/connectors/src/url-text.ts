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
