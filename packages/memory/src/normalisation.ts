import { maskLine } from "@pes/analysis";

/** Details longer than this are cut before masking: a fingerprint stays small. */
const MAX_DETAIL_CHARS = 300;

// The characters Kubernetes draws generated name suffixes from (no vowels, no 0, 1, 3: k8s.io/apimachinery's rand.String).
const GENERATED = /^[bcdfghjklmnpqrstvwxz2456789]+$/;
const IP = /\b(?:\d{1,3}\.){3}\d{1,3}\b|(?<![\w:])(?:[0-9a-fA-F]{1,4}:){2,7}[0-9a-fA-F]{1,4}(?![\w:])/g;
const UUID = /\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g;
const HEX = /\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{12,}\b/g;
// A port (after a colon) names a service: kept.
const LONG_NUMBER = /(?<!:)\b\d{4,}\b/g;

/**
 * A subject as the fingerprint keeps it, so that the same object matches across incidents: a pod's
 * generated suffixes dropped (`pod/checkout-7d9f8b6c5d-x2x7q` → `pod/checkout`), and in each label's value
 * (`instance=10.0.3.7:9100`) addresses, UUIDs, long hex strings and long numbers masked. Names that are
 * the object's identity (`node/node-2`, `db=orders-db`, a StatefulSet's `db-0`) stay as they are.
 */
export function normaliseSubject(subject: string): string {
  return subject
    .split(/,\s*/)
    .map((part) => {
      const equals = part.indexOf("=");
      return equals === -1 ? normaliseName(part) : `${part.slice(0, equals)}=${normaliseName(part.slice(equals + 1))}`;
    })
    .join(", ");
}

function normaliseName(name: string): string {
  const slash = name.lastIndexOf("/");
  const kind = slash === -1 ? "" : name.slice(0, slash + 1);
  const masked = withoutGeneratedSuffixes(name.slice(slash + 1))
    .replace(UUID, "<uuid>")
    .replace(IP, "<ip>")
    .replace(HEX, "<hex>")
    .replace(LONG_NUMBER, "<num>");
  return kind + masked;
}

/**
 * A pod's name without what its controllers generated: the 5-character suffix of a ReplicaSet's,
 * DaemonSet's or Job's pod, then the pod-template hash of a Deployment's ReplicaSet (6 to 10 characters).
 * A segment is generated when it is of Kubernetes' alphabet, or (an older hash in hex) has a digit.
 */
function withoutGeneratedSuffixes(name: string): string {
  const segments = name.split("-");
  if (segments.length < 2) return name;
  const last = segments[segments.length - 1] ?? "";
  if (last.length !== 5 || !generated(last)) return name;
  segments.pop();
  const hash = segments[segments.length - 1] ?? "";
  if (segments.length >= 2 && hash.length >= 6 && hash.length <= 10 && generated(hash)) segments.pop();
  return segments.join("-");
}

function generated(segment: string): boolean {
  return /^[a-z0-9]+$/.test(segment) && (GENERATED.test(segment) || /\d/.test(segment));
}

/**
 * A detail (a version, an event's reason and message, a log pattern, a limit) as the fingerprint keeps
 * it: its variable parts masked as log lines are templated (maskLine of the analysis' log templates:
 * times, quoted strings, ids, addresses, hex, durations, numbers), so that `checkout:v1.42` and
 * `checkout:v1.43` are one detail, and two OOM kills of different pods one reason.
 */
export function normaliseDetail(detail: string): string {
  return maskLine(detail.length > MAX_DETAIL_CHARS ? detail.slice(0, MAX_DETAIL_CHARS) : detail);
}
