import { z } from "zod";

/**
 * The placeholder an upstreams gadget binds to each upstream's name. It is not an attribute of the issue:
 * the playbook says which services the paged one calls, so that their own signals are read beside its.
 */
export const UPSTREAM_PLACEHOLDER = "upstream";

/** A service name as Kubernetes, Prometheus labels and log lines write it: no spaces, no quotes. */
const UPSTREAM_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const UpstreamList = z
  .array(z.string().regex(UPSTREAM_NAME, "must be a service name (letters, digits, '.', '_' and '-', starting with a letter or digit)"))
  .min(1, "list at least one upstream")
  .refine((names) => new Set(names).size === names.length, "each upstream once");

/**
 * The services a gadget is instantiated for, once each with `{{upstream}}` bound to its name: a fixed
 * list (a playbook about one service), or a list per value of one attribute (`by: service`: checkout
 * calls orders and cart, catalog calls search). A value with no list runs no instance.
 */
export const GadgetUpstreams = z.union([
  UpstreamList,
  z.strictObject({
    /** The attribute whose value picks the list. */
    by: z.string().min(1),
    lists: z.record(z.string(), UpstreamList),
  }),
]);
export type GadgetUpstreams = z.infer<typeof GadgetUpstreams>;

/** One instance of a gadget: the upstream it is about (none for a gadget without upstreams). */
export interface GadgetInstance {
  upstream?: string;
}

/**
 * The instances of a gadget for an issue's attributes: one for a gadget without `upstreams`, one per
 * upstream otherwise (none when `by` names an attribute the issue lacks, or a value with no list).
 */
export function gadgetInstances(gadget: { upstreams?: GadgetUpstreams | undefined }, attributes: Readonly<Record<string, string>>): GadgetInstance[] {
  const { upstreams } = gadget;
  if (upstreams === undefined) return [{}];
  const names = Array.isArray(upstreams) ? upstreams : Object.hasOwn(attributes, upstreams.by) ? listOf(upstreams.lists, attributes[upstreams.by] ?? "") : [];
  return names.map((upstream) => ({ upstream }));
}

/** The attributes an instance's templates are filled with: the issue's, and its upstream's name. */
export function instanceAttributes(attributes: Readonly<Record<string, string>>, instance: GadgetInstance): Readonly<Record<string, string>> {
  return instance.upstream === undefined ? attributes : { ...attributes, [UPSTREAM_PLACEHOLDER]: instance.upstream };
}

function listOf(lists: Readonly<Record<string, readonly string[]>>, value: string): readonly string[] {
  return Object.hasOwn(lists, value) ? (lists[value] ?? []) : [];
}
