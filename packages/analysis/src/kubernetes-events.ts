import type { EventEvidence } from "./evidence.js";

/**
 * The kubelet's crash-loop event: reason `BackOff`, "Back-off restarting failed container …". The same
 * reason names an image pull's back-off ("Back-off pulling image …"), which is not a crash loop: only
 * the message tells them apart.
 */
const CRASH_LOOP_MESSAGE = /\bback-off restarting failed container\b/i;

/** Whether an event says a container keeps failing and being restarted (a crash loop). */
export function isCrashLoopEvent(event: EventEvidence): boolean {
  return event.reason === "CrashLoopBackOff" || (event.reason === "BackOff" && CRASH_LOOP_MESSAGE.test(event.message ?? ""));
}
