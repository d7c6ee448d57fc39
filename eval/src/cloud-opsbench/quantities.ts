/** Kubernetes quantities (`250m`, `1.5`, `128Mi`, `1G`) as numbers: cores for CPU, bytes for memory. */

const SUFFIXES: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
};

/** A quantity's value; `undefined` when it is not one. */
export function quantityValue(text: string): number | undefined {
  const match = /^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)([a-zA-Z]*)$/.exec(text.trim());
  if (match === null) return undefined;
  const scale = SUFFIXES[match[2] ?? ""];
  return scale === undefined ? undefined : Number(match[1]) * scale;
}
