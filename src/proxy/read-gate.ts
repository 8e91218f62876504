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
