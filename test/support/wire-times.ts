/** A point in time as the package's JSON carries it (CLI `--json`, the status page's API): ISO 8601, UTC. */
export const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** `T` as that JSON carries it: each `Date` an ISO 8601 string. */
export type Wire<T> = T extends Date
  ? string
  : T extends readonly (infer E)[]
    ? Wire<E>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;
