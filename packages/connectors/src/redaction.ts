const REDACTED = "[redacted]";
/** Too short to redact without garbling ordinary text; such a secret is no secret anyway. */
const MIN_SECRET_LENGTH = 4;

/**
 * Replaces each secret in `text` by `[redacted]`, in every form a data source may echo it in: as it is,
 * URL-encoded (`encodeURIComponent`, form encoding, lower-case hex) and escaped inside a JSON string.
 * Longer forms go first, so that a secret holding another is replaced whole. The secrets are a data
 * source's, resolved at start (DataSourceSecrets.redacted).
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const form of formsOf(secrets)) {
    if (result.includes(form)) result = result.split(form).join(REDACTED);
  }
  return result;
}

const formsBySecrets = new WeakMap<readonly string[], string[]>();

/** The forms of a data source's secrets, computed once per list: the list lives as long as the worker. */
function formsOf(secrets: readonly string[]): string[] {
  let forms = formsBySecrets.get(secrets);
  if (forms === undefined) {
    forms = computeForms(secrets);
    formsBySecrets.set(secrets, forms);
  }
  return forms;
}

function computeForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    const encoded = encodeURIComponent(secret);
    forms.add(secret);
    forms.add(encoded);
    forms.add(encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()));
    forms.add(new URLSearchParams({ s: secret }).toString().slice("s=".length));
    forms.add(JSON.stringify(secret).slice(1, -1));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}
