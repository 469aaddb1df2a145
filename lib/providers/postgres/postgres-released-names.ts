/** How many released names a node remembers; past it the oldest is let go, and its row stays until reused. */
const LIMIT = 10_000;

/**
 * The plain locks this node released, whose rows its next releases delete once no lock statement drawn before
 * could still run: `settle` ms later (the statement timeout and a margin). Deleting sooner could let a statement
 * that drew its fencing token earlier recreate the row with a token lower than the deleted row's.
 */
export class ReleasedNames {
  /** Name → when it was released (`performance.now()`), oldest first. */
  private readonly released = new Map<string, number>();

  constructor(readonly settle: number) {}

  add(name: string): void {
    this.released.delete(name);
    if (this.released.size >= LIMIT) this.released.delete(this.released.keys().next().value!);
    this.released.set(name, performance.now());
  }

  /** Takes the names whose rows may be deleted now; {@link restore} them if the statement fails. */
  takeDue(): string[] {
    const due: string[] = [];
    const before = performance.now() - this.settle;
    for (const [name, at] of this.released) {
      if (at > before) break;
      due.push(name);
      this.released.delete(name);
    }
    return due;
  }

  restore(names: readonly string[]): void {
    for (const name of names) if (!this.released.has(name)) this.released.set(name, 0);
  }
}

/**
 * How long after a release a plain lock's row may be deleted: a lock statement runs at most `statementTimeout` on
 * the server; one second more for clocks and scheduling, and a minute without a timeout (`false`).
 */
export function settleDelay(statementTimeout: number | false): number {
  return statementTimeout === false ? 60_000 : statementTimeout + 1_000;
}
