import type * as ContractApp from './module/contract-app.js';
import type * as OccurrenceJobs from './module/occurrence-jobs.js';

/** The kit's Nest apps and jobs: loaded by the first check that starts an app, never by the rest of the kit. */
export type KitModules = typeof ContractApp & typeof OccurrenceJobs;

let loading: Promise<KitModules> | undefined;

/**
 * Loads the kit's apps once, one module after the other: checks that run at once share the load (Jest's ESM
 * loader fails imports of one module graph made at once).
 */
export function loadKitModules(): Promise<KitModules> {
  loading ??= (async () => ({
    ...(await import('./module/contract-app.js')),
    ...(await import('./module/occurrence-jobs.js')),
  }))();
  return loading;
}
