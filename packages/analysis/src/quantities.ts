const SUFFIXES: Readonly<Record<string, number>> = {
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
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A Kubernetes quantity ("250m", "64Mi", "1.5Gi", "2") as a number of its base unit; undefined when unreadable. */
export function quantityOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const match = /^\s*([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (match === null) return undefined;
  const factor = SUFFIXES[match[2] ?? ""];
  return factor === undefined ? undefined : Number(match[1]) * factor;
}
