/**
 * The record stream: every record line written to the log is also offered to subscribers (the web UI's
 * feed today). Publishing never waits for a subscriber: each has its own bounded queue, drained on a later
 * turn of the event loop; past `maxQueue` lines (or `maxQueueChars` characters) new lines are dropped and counted. A subscriber that throws or
 * is slow only loses its own lines, never slows traffic or the file sink.
 */
export type RecordListener = (line: string) => void | Promise<void>;

export interface SubscribeOptions {
  /** Lines held for this subscriber before new ones are dropped (default 10,000). */
  maxQueue?: number;
  /** Characters of the lines held for this subscriber before new ones are dropped (default 64 Mi). */
  maxQueueChars?: number;
  /** Named in drop reports. */
  name?: string;
}

export interface Subscription {
  readonly name: string;
  /** Lines dropped so far because the queue was full. */
  readonly dropped: number;
  stop(): void;
}

/** `name` lost `dropped` lines since the previous report. */
export type DropReporter = (report: { subscriber: string; dropped: number; errors: number }) => void;

export const DEFAULT_MAX_QUEUE = 10_000;
/** A record line may be megabytes long (a payload in full): the queue is bounded by its size too. */
export const DEFAULT_MAX_QUEUE_CHARS = 64 * 1024 * 1024;
export const DROP_REPORT_INTERVAL_MS = 10_000;
/** Lines handed to a synchronous listener per turn, so that a busy subscriber yields to traffic. */
const DRAIN_BATCH = 512;

class Subscriber implements Subscription {
  dropped = 0;
  errors = 0;
  reportedDrops = 0;
  reportedErrors = 0;
  private queue: string[] = [];
  private head = 0;
  private queuedChars = 0;
  private scheduled = false;
  private stopped = false;

  constructor(
    readonly name: string,
    private readonly fn: RecordListener,
    private readonly maxQueue: number,
    private readonly maxQueueChars: number,
    private readonly onStop: (s: Subscriber) => void,
  ) {}

  offer(line: string): void {
    if (this.stopped) return;
    if (this.queue.length - this.head >= this.maxQueue || this.queuedChars + line.length > this.maxQueueChars) {
      this.dropped++;
      return;
    }
    this.queue.push(line);
    this.queuedChars += line.length;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => void this.drain());
    }
  }

  private async drain(): Promise<void> {
    let handed = 0;
    while (!this.stopped && this.head < this.queue.length && handed < DRAIN_BATCH) {
      const line = this.queue[this.head] as string;
      // Let go of the line at once: the array is compacted only now and then, and lines may be megabytes.
      this.queue[this.head] = "";
      this.head++;
      this.queuedChars -= line.length;
      handed++;
      try {
        const pending = this.fn(line);
        // An asynchronous listener is awaited: its backlog stays in its own queue.
        if (pending && typeof pending.then === "function") await pending;
      } catch {
        this.errors++;
      }
    }
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    if (!this.stopped && this.head < this.queue.length) {
      setImmediate(() => void this.drain());
    } else {
      this.scheduled = false;
    }
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.queue = [];
    this.head = 0;
    this.queuedChars = 0;
    this.onStop(this);
  }
}

export class RecordStream {
  private subscribers: Subscriber[] = [];
  private timer: NodeJS.Timeout | null = null;
  private reporter: DropReporter | null = null;

  /** Where drop counts go (once per 10 s while there are new ones, and at close). */
  setDropReporter(reporter: DropReporter): void {
    this.reporter = reporter;
  }

  subscribe(fn: RecordListener, opts: SubscribeOptions = {}): Subscription {
    const maxQueue = Math.max(1, opts.maxQueue ?? DEFAULT_MAX_QUEUE);
    const maxChars = opts.maxQueueChars ?? DEFAULT_MAX_QUEUE_CHARS;
    const sub = new Subscriber(opts.name ?? `subscriber-${this.subscribers.length + 1}`, fn, maxQueue, maxChars, (s) => {
      this.reportFor(s);
      this.subscribers = this.subscribers.filter((x) => x !== s);
      if (this.subscribers.length === 0) this.stopTimer();
    });
    this.subscribers = [...this.subscribers, sub];
    if (!this.timer) {
      this.timer = setInterval(() => this.report(), DROP_REPORT_INTERVAL_MS);
      this.timer.unref();
    }
    return sub;
  }

  /** One record line, as written to the sink (newline optional). */
  publish(line: string): void {
    const subs = this.subscribers;
    if (subs.length === 0) return;
    const record = line.endsWith("\n") ? line.slice(0, -1) : line;
    for (const s of subs) s.offer(record);
  }

  get subscriberCount(): number {
    return this.subscribers.length;
  }

  /** Reports what was dropped since the last report and stops every subscriber. */
  close(): void {
    for (const s of [...this.subscribers]) s.stop();
    this.stopTimer();
  }

  private report(): void {
    for (const s of this.subscribers) this.reportFor(s);
  }

  private reportFor(s: Subscriber): void {
    const dropped = s.dropped - s.reportedDrops;
    const errors = s.errors - s.reportedErrors;
    if (dropped === 0 && errors === 0) return;
    s.reportedDrops = s.dropped;
    s.reportedErrors = s.errors;
    try {
      this.reporter?.({ subscriber: s.name, dropped, errors });
    } catch {
      // A failing reporter must not break publishing.
    }
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** A pino destination that writes to `next`, then offers the same line to the stream. */
export function teeToRecordStream<T extends { write(chunk: string): unknown }>(next: T, records: RecordStream): { write(chunk: string): boolean } {
  return {
    write(chunk: string): boolean {
      next.write(chunk);
      records.publish(chunk);
      return true;
    },
  };
}
