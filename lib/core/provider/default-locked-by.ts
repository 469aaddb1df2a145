import { hostname } from 'node:os';

/** Who this node is, in locks and events, unless the app names it: `<hostname>:<pid>`. */
export function defaultLockedBy(): string {
  return `${hostname()}:${process.pid}`;
}
