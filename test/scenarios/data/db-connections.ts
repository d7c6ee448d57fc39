import type { Scenario } from "./scenario.js";
import { addRolloutEvents, finish, NAMESPACE, shopWorld, type Revision } from "./shop-world.js";
import { clockAt, hexId, jittered, linesAt, ramp, stepAt } from "./synthetic.js";

/** search v3.1, rolled out 14 minutes before the issue: after the connections began to climb. */
export const UNRELATED_REVISION: Revision = { revision: 45, version: "v3.1", atMinutes: -14 };

/**
 * A database saturating its connections: from 22 minutes before the issue, orders-db's open connections
 * climb steadily from their usual 38 to the limit of 100 (max_connections), reached 6 minutes before the
 * issue. Then Postgres refuses new clients ("sorry, too many clients already") and orders fails a fifth of
 * its requests, waiting 30 s for a connection. A search rollout 14 minutes before the issue falls
 * between the two: after the slow cause began, before the fast symptom, and before the connections
 * crossed twice their usual level (12 minutes before): dated by that crossing, the rollout would look
 * like the cause. users-db, with its own connections and limit, is fine.
 */
export function dbConnections(issueAt: Date): Scenario {
  const clock = clockAt(issueAt);
  const leakFrom = clock.seconds(-22);
  const full = clock.seconds(-6);
  const world = shopWorld(clock, {
    dbConnections: { "orders-db": jittered(ramp(leakFrom, full, 38, 104), "orders-db-conn", 0.06) },
    rollouts: { search: [UNRELATED_REVISION] },
    traffic: {
      orders: {
        errorShare: ramp(full, full + 30, 0.003, 0.22),
        meanLatency: ramp(full, full + 60, 0.05, 1.8),
      },
    },
  });
  world.addDatabaseLogs(
    "orders-db",
    linesAt("too-many", clock.at(-6), clock.at(15), stepAt(full, 0, 30), () => "FATAL:  sorry, too many clients already"),
  );
  world.addServiceLogs(
    "orders",
    linesAt(
      "pool",
      clock.at(-6),
      clock.at(15),
      stepAt(full, 0, 20),
      (n) => `level=error msg="could not acquire connection" pool=orders-db waited=30.0${n % 10}s order_id=ord-${93_000 + n} trace_id=${hexId("pool", n, 16)}`,
    ),
  );
  world.addAlert({
    name: "PostgresTooManyConnections",
    labels: { db: "orders-db", namespace: NAMESPACE },
    severity: "critical",
    startsAtMinutes: -8,
    summary: "orders-db uses more than 90% of its max_connections.",
  });
  world.addAlert({
    name: "OrdersHighErrorRate",
    labels: { service: "orders", namespace: NAMESPACE },
    severity: "critical",
    startsAtMinutes: -3,
    summary: "More than 5% of orders requests fail.",
  });
  addRolloutEvents(world, "search", UNRELATED_REVISION);
  return { name: "db-connections", issueAt, request: { title: "Too many connections on orders-db" }, data: finish(world) };
}

/**
 * The same incident paged for the service that fails, not the database: "High error rate on orders".
 * orders' database, orders-db, reached its connection limit before orders' errors began.
 */
export function dbBehindService(issueAt: Date): Scenario {
  return { ...dbConnections(issueAt), name: "db-behind-service", request: { title: "High error rate on orders" } };
}
