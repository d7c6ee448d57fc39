import type { KubernetesState, TimeWindow } from "@pes/contracts";
import type { Cited, Evidence } from "./evidence.js";

/** What a namespace's state shows is wrong: one finding per fault, its object and its mechanism. */
export function stateFindings(state: KubernetesState, window: TimeWindow, cited: Cited): Evidence[] {
  void state;
  void window;
  void cited;
  return [];
}
