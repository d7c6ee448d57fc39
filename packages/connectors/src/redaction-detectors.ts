import { isIPv4, isIPv6 } from "node:net";

/**
 * The kinds of value the redaction boundary finds by their shape, each on unless an organization turns it
 * off (`redaction.detectors` in its file). Released: a kind is the first part of its tokens (`«email:…»`).
 */
export const BUILT_IN_REDACTION_KINDS = ["email", "ipv4", "ipv6", "bearer", "api-key", "card", "jwt"] as const;
export type BuiltInRedactionKind = (typeof BUILT_IN_REDACTION_KINDS)[number];

/**
 * One kind of value to redact: a regular expression source without capturing groups of its own (it becomes
 * one alternative of a combined pattern), and a check of what it matched when the shape alone says too
 * little (a card number's Luhn digit, an address that parses).
 */
export interface RedactionDetector {
  kind: string;
  source: string;
  accepts?: (match: string) => boolean;
}

/**
 * API keys by their issuers' documented prefixes: OpenAI and Anthropic (`sk-`, `sk-proj-`, `sk-ant-`),
 * Slack (`xoxb-`, `xoxp-`, `xoxa-`, `xoxo-`, `xoxr-`, `xoxs-`), AWS access key ids (`AKIA`, `ASIA`),
 * GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), GitLab (`glpat-`), Google (`AIza`),
 * Stripe (`sk_live_`, `rk_live_`).
 */
const API_KEY = [
  "sk-[A-Za-z0-9_-]{20,}",
  "xox[bpaors]-[A-Za-z0-9-]{10,}",
  "(?:AKIA|ASIA)[0-9A-Z]{16}",
  "gh[pousr]_[A-Za-z0-9]{36,}",
  "github_pat_[A-Za-z0-9_]{22,}",
  "glpat-[A-Za-z0-9_-]{20,}",
  "AIza[0-9A-Za-z_-]{35}",
  "(?:sk|rk)_live_[0-9A-Za-z]{16,}",
].join("|");

/**
 * The built-in detectors, in the order a tie at one position is broken. Each is linear on any input: no
 * quantified group holds another quantifier, and every run has a bound or a single way to match.
 */
export const BUILT_IN_DETECTORS: Readonly<Record<BuiltInRedactionKind, RedactionDetector>> = {
  // `Bearer <credential>`: the credential only, so the text still says what it was.
  bearer: { kind: "bearer", source: "(?<=\\b[Bb]earer[ \\t]{1,8})[A-Za-z0-9._~+/-]{8,}=*" },
  // Three base64url parts, the first two JSON objects (`{"` is `eyJ`); the signature may be empty (alg none).
  jwt: { kind: "jwt", source: "(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\\.eyJ[A-Za-z0-9_-]{4,}\\.[A-Za-z0-9_-]*" },
  "api-key": { kind: "api-key", source: `(?<![A-Za-z0-9_-])(?:${API_KEY})` },
  email: {
    kind: "email",
    source: "(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\\.[A-Za-z0-9-]{1,63}){0,8}\\.[A-Za-z]{2,24}(?![A-Za-z0-9-])",
  },
  // Dotted quads that parse as addresses (not a version `1.2.3.4.5`, nor `999.1.1.1`).
  ipv4: { kind: "ipv4", source: "(?<![\\w.])\\d{1,3}(?:\\.\\d{1,3}){3}(?![\\w]|\\.\\d)", accepts: (match) => isIPv4(match) },
  // Groups of hex digits and colons that parse as an address (`12:30:45` does not), an IPv4 tail included.
  ipv6: {
    kind: "ipv6",
    source: "(?<![\\w:.])(?:[0-9A-Fa-f]{1,4}|:)?(?::[0-9A-Fa-f]{0,4}){2,7}(?:\\.\\d{1,3}){0,3}(?![\\w:])",
    accepts: (match) => isIPv6(match) && /[0-9A-Fa-f]/.test(match),
  },
  // 13 to 19 digits, spaces or dashes between, from an issuer's first digit (2–6: Mastercard, Amex, Visa,
  // Discover…; an epoch in milliseconds starts with 1), and only if the Luhn check digit is right.
  // A number of its own: never digits inside a word (a trace id `ab4111111111111111cd`) or a decimal
  // (a metric's sample `0.4111111111111111`: not after a digit and a `.` or `,`, nor before them).
  card: {
    kind: "card",
    source: "(?<![\\w-])(?<!\\d[.,])[2-6](?:[ -]?\\d){12,18}(?![\\w-]|[.,]\\d)",
    accepts: (match) => luhnValid(match.replace(/[ -]/g, "")),
  },
};

/** Whether a string of digits ends in the right Luhn check digit (ISO/IEC 7812-1), as card numbers do. */
export function luhnValid(digits: string): boolean {
  if (!/^\d{2,}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}
