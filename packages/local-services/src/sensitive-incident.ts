/**
 * A seeded incident whose data holds personal data and secrets of every kind the redaction boundary finds
 * (docs/redaction.md): checkout's error log (for a fake Loki) quotes them all from 14:05, and a latency
 * range answer (Prometheus' JSON) carries some in its series' labels. For the tests that check nothing of
 * them leaves the worker.
 */
const ISSUE = Date.parse("2026-11-20T14:08:00Z");
const START = ISSUE - 60 * 60_000;

/** The issue time of the seeded incident. */
export const SENSITIVE_INCIDENT_TIME = new Date(ISSUE);

/** One sample of each built-in kind, and the organization's own pattern and label. */
export const SENSITIVE_SAMPLES = {
  email: "jane.doe@example.com",
  ipv4: "203.0.113.7",
  ipv6: "2001:db8::8a2e:370:7334",
  bearer: "abcdefgh12345678ijkl",
  apiKey: "sk-proj-abcdefghijklmnopqrstuvwx",
  slackToken: "xoxb-1234567890-abcdefghij",
  awsKey: "AKIAIOSFODNN7EXAMPLE",
  githubToken: "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
  card: "4111 1111 1111 1111",
  jwt: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
  employee: "EMP-48213",
  customer: "Globex Corporation",
} as const;
export const OTHER_SAMPLE_EMAIL = "ops@example.org";

/** Checkout's error log: quiet before 14:05, then failing requests quoting every sample, the same ones each time. */
export function sensitiveErrorLines(): { at: number; line: string }[] {
  const lines: { at: number; line: string }[] = [];
  for (let at = START; at < ISSUE; at += 20_000) {
    if (at < ISSUE - 3 * 60_000 && at % 600_000 !== 0) continue;
    lines.push({
      at,
      line:
        `level=error msg="payment refused for ${SENSITIVE_SAMPLES.email} from ${SENSITIVE_SAMPLES.ipv4} via ${SENSITIVE_SAMPLES.ipv6}" ` +
        `auth="Bearer ${SENSITIVE_SAMPLES.bearer}" key=${SENSITIVE_SAMPLES.apiKey} slack=${SENSITIVE_SAMPLES.slackToken} aws=${SENSITIVE_SAMPLES.awsKey} gh=${SENSITIVE_SAMPLES.githubToken} ` +
        `card="${SENSITIVE_SAMPLES.card}" session=${SENSITIVE_SAMPLES.jwt} owner=${SENSITIVE_SAMPLES.employee} customer="${SENSITIVE_SAMPLES.customer}"`,
    });
  }
  return lines;
}

/** A range answer whose series' labels hold samples; its latency quadruples from 14:05. */
export function sensitiveLatencyAnswer(): object {
  const series = [
    { instance: `${SENSITIVE_SAMPLES.ipv4}:9100`, client: SENSITIVE_SAMPLES.ipv6, owner: SENSITIVE_SAMPLES.email, customer: SENSITIVE_SAMPLES.customer },
    { instance: "10.0.0.9:9100", client: "fe80::1", owner: OTHER_SAMPLE_EMAIL, customer: "Initech" },
  ];
  return {
    status: "success",
    data: {
      resultType: "matrix",
      result: series.map((labels, index) => ({
        metric: { __name__: "http_request_duration_seconds", service: "checkout", ...labels },
        values: Array.from({ length: 240 }, (_, i) => {
          const at = START / 1000 + i * 15;
          return [at, String((at * 1000 > ISSUE - 3 * 60_000 ? 2 : 0.5) + index * 0.01 + (i % 7) / 1000)];
        }),
      })),
    },
  };
}
