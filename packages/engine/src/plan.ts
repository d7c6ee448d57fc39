import type { TimeWindow } from "@pes/connectors";
import type { ExecutionJob } from "@pes/contracts";
import { gadgetInstances, instanceAttributes, type GadgetDefinition, type GadgetInstance, type PlaybookDefinition } from "@pes/playbooks";
import { fillTextOrKeep } from "@pes/templates";
import type { PreparedStep } from "./prepare.js";
import { issueWindow } from "./time-window.js";

/** One instance of a gadget: the gadget once, or once per upstream of a gadget that declares them. */
export interface PlannedGadget {
  gadget: GadgetDefinition;
  gadgetIndex: number;
  instance: GadgetInstance;
  /** The issue's attributes, with the instance's upstream bound. */
  attributes: Readonly<Record<string, string>>;
  title: string;
}

export interface PlannedAction extends PreparedStep {
  title: string;
  gadgetTitle: string;
  /** Which instance of its gadget (gadgetInstances): one per upstream of a gadget that declares them. */
  instance: GadgetInstance;
  /** Its gadget's instance among the execution's, in playbook order. */
  instanceIndex: number;
  /** The issue's attributes, with the instance's upstream bound. */
  attributes: Readonly<Record<string, string>>;
}

/** What an execution will run: over which window, which gadget instances, which actions in playbook order. */
export interface Plan {
  time: Date;
  window: TimeWindow;
  gadgets: PlannedGadget[];
  actions: PlannedAction[];
  /** The upstreams the gadgets' instances are about: whom the paged service calls. */
  upstreams: string[];
}

/**
 * The plan of a job over its playbook's prepared steps: the issue's window, each gadget's instances (a
 * gadget that declares upstreams once per upstream, `{{upstream}}` bound to its name) and their actions
 * with their titles filled. `{ error }` when the job's time cannot be read.
 */
export function planInvestigation(job: ExecutionJob, playbook: PlaybookDefinition, steps: readonly PreparedStep[], now: Date): Plan | { error: string } {
  const time = new Date(job.time);
  if (Number.isNaN(time.getTime())) return { error: `Invalid issue time "${job.time}"` };
  const { attributes } = job;
  const gadgets = playbook.gadgets.flatMap((gadget, gadgetIndex) =>
    gadgetInstances(gadget, attributes).map((instance) => {
      const bound = instanceAttributes(attributes, instance);
      return { gadget, gadgetIndex, instance, attributes: bound, title: fillTextOrKeep(gadget.title, bound) };
    }),
  );
  const actions = gadgets.flatMap((gadget, instanceIndex) =>
    steps.filter((step) => step.gadgetIndex === gadget.gadgetIndex).map((step) => plannedAction(step, gadget, instanceIndex)),
  );
  const upstreams = [...new Set(gadgets.flatMap(({ instance }) => (instance.upstream === undefined ? [] : [instance.upstream])))];
  return { time, window: issueWindow(time, playbook.window, now), gadgets, actions, upstreams };
}

function plannedAction(step: PreparedStep, gadget: PlannedGadget, instanceIndex: number): PlannedAction {
  const { upstream } = gadget.instance;
  return {
    ...step,
    // Instances fill the same query with another upstream: not the same query.
    ...(step.queryKey === undefined || upstream === undefined ? {} : { queryKey: `${step.queryKey}\u0000${upstream}` }),
    title: fillTextOrKeep(step.definition.title, gadget.attributes),
    gadgetTitle: gadget.title,
    instance: gadget.instance,
    instanceIndex,
    attributes: gadget.attributes,
  };
}
