/**
 * Whether an exchange's bodies may be read from their senders now. Closed while anyone holds it (what waits
 * behind a judgement passed its byte budget: budget/waiting-budget.ts); the readers (coalesce.ts, the event
 * writer) pause their source then and read on once it opens.
 */
export class ReadGate {
  private holds = 0;
  private readonly listeners = new Set<(open: boolean) => void>();

  get open(): boolean {
    return this.holds === 0;
  }

  /** Closes the gate until the returned function is called (once; later calls do nothing). */
  hold(): () => void {
    let released = false;
    if (this.holds++ === 0) this.tell(false);
    return () => {
      if (released) return;
      released = true;
      if (--this.holds === 0) this.tell(true);
    };
  }

  /** `listener(open)` on every change; returns the function that stops telling it. */
  watch(listener: (open: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  private tell(open: boolean): void {
    for (const l of [...this.listeners]) l(open);
  }
}

/**
 * A gate closed while any of `gates` is closed (an exchange's own gate, and its peer's: read-scheduler.ts);
 * `stop` unwatches them (call it when the reader is done: the peer's gate outlives the exchange).
 */
export function joinedGate(...gates: ReadGate[]): { gate: ReadGate; stop(): void } {
  const gate = new ReadGate();
  const unwatch = gates.map((g) => {
    let release: (() => void) | null = g.open ? null : gate.hold();
    return g.watch((open) => {
      if (open) {
        release?.();
        release = null;
      } else release ??= gate.hold();
    });
  });
  return { gate, stop: () => unwatch.forEach((u) => u()) };
}
