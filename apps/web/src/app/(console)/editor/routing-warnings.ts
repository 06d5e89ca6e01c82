import { needOf, unmetNeed, type WorkerOffer } from '@fenceline/core';
import type { DraftSpec } from './draft';

/** A task the draft asks for that no live worker (or no limit) would serve: a warning, never a refusal. */
export interface RoutingWarning {
  taskId: string;
  index: number;
  message: string;
}

/** What the editor knows of the cluster right now: live workers' offers and the limits that exist. */
export interface ClusterView {
  offers: { offer: WorkerOffer; reported: boolean }[] | undefined;
  limits: { name: string; capacity: number }[] | undefined;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const texts = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);

/**
 * The tasks of the draft that would wait for a worker that is not there: a pool, a label or
 * a type no live worker offers (unmetNeed's words), and limits that do not exist or are too
 * small. Workers come and go, so a draft that asks for a pool nobody serves yet may well be
 * right: these are warnings shown beside the validator's issues and never block a save (the
 * store itself refuses only a limit that does not exist or is too small). While a live
 * worker has not said what it offers (an older worker), nothing is said of workers at all.
 */
export function routingWarnings(spec: DraftSpec, cluster: ClusterView): RoutingWarning[] {
  const out: RoutingWarning[] = [];
  const offers = cluster.offers;
  const knowOffers = offers !== undefined && offers.every((o) => o.reported);
  const limits = cluster.limits === undefined ? undefined : new Map(cluster.limits.map((l) => [l.name, l.capacity]));
  spec.tasks.forEach((task, index) => {
    if (knowOffers && typeof task.type === 'string' && task.type !== '') {
      const why = unmetNeed(
        needOf({ type: task.type, pool: text(task.pool), labels: texts(task.labels) }),
        offers.map((o) => o.offer),
      );
      if (why !== null) out.push({ taskId: task.id, index, message: `${why}: task ${task.id} would wait, ready, until one joins` });
    }
    const resources = task.resources;
    if (limits !== undefined && typeof resources === 'object' && resources !== null && !Array.isArray(resources)) {
      for (const [name, units] of Object.entries(resources as Record<string, unknown>)) {
        const capacity = limits.get(name);
        if (capacity === undefined) out.push({ taskId: task.id, index, message: `limit \`${name}\` does not exist: the store refuses the save until it is created` });
        else if (typeof units === 'number' && units > capacity)
          out.push({ taskId: task.id, index, message: `limit \`${name}\` has only ${capacity} units, task ${task.id} asks for ${units}: the store refuses the save` });
      }
    }
  });
  return out;
}
