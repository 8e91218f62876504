/**
 * The content scan of a long message in slices, so that no one message holds the event loop for the whole of
 * its scan: every other connection (`/healthz`, another client's calls) is served between two slices. A slice
 * is a few milliseconds of steps (one step: one text of the message through every scanner, see ContentScan);
 * the peers whose messages wait take turns, one slice each, so one peer's long messages delay its own and cost
 * the others a slice at a time. Short messages are scanned at once, as before.
 *
 * What waits is bounded in bytes (a message's size as received), per peer and in all. Past that a message is
 * not scanned, as past the inspection budget: its findings say so (`not_scanned`), which flags it (or denies it,
 * as its detectors' setting says), and its record carries no payload, only its size. Scanning it at once instead would hold
 * the loop for every connection whenever one peer sends long messages faster than they are scanned.
 */

/** A message this long or longer (bytes as received) is scanned in slices. */
export const SLICED_SCAN_BYTES = 64 * 1024;
/** How long one slice may run before the loop is given back (a step, one text, is never cut). */
const SLICE_MS = 8;
/** Bytes of messages waiting for their scan, per peer and in all. */
const QUEUED_BYTES_PER_PEER = 8 * 1024 * 1024;
const QUEUED_BYTES = 32 * 1024 * 1024;

/** Work done one step at a time: `step()` says whether there is more. */
export interface Steps<T> {
  step(): boolean;
  readonly result: T;
  /** The result when the work is not done (the queue is full), saying why. */
  skipped(reason: string): T;
}

interface Job {
  steps: Steps<unknown>;
  bytes: number;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export class SlicedScans {
  /** Waiting jobs per peer; the map's order is the peers' turn order. */
  private readonly queues = new Map<string, Job[]>();
  private readonly peerBytes = new Map<string, number>();
  private queuedBytes = 0;
  private scheduled = false;

  constructor(
    private readonly limits = { sliceMs: SLICE_MS, minBytes: SLICED_SCAN_BYTES, perPeer: QUEUED_BYTES_PER_PEER, total: QUEUED_BYTES },
  ) {}

  /** The result of `steps`: at once for a short message (or skipped when the queue is full), else once its slices have run. */
  run<T>(peer: string, bytes: number, steps: Steps<T>): T | Promise<T> {
    if (bytes < this.limits.minBytes) {
      while (steps.step());
      return steps.result;
    }
    const held = this.peerBytes.get(peer) ?? 0;
    // A message alone is always scanned, however long (--max-inspect-bytes bounds it): the bounds are on what waits before it.
    const peerFull = held > 0 && held + bytes > this.limits.perPeer;
    if (peerFull || (this.queuedBytes > 0 && this.queuedBytes + bytes > this.limits.total)) {
      const whose = peerFull ? `this peer's (${held} bytes)` : `all peers' (${this.queuedBytes} bytes)`;
      return steps.skipped(`not scanned: ${whose} long messages already wait for their scan`);
    }
    return new Promise<T>((resolve, reject) => {
      const queue = this.queues.get(peer);
      const job: Job = { steps, bytes, resolve: resolve as (value: unknown) => void, reject };
      if (queue) queue.push(job);
      else this.queues.set(peer, [job]);
      this.peerBytes.set(peer, held + bytes);
      this.queuedBytes += bytes;
      this.schedule();
    });
  }

  /** Bytes of messages waiting for their scan. */
  get waitingBytes(): number {
    return this.queuedBytes;
  }

  private schedule(): void {
    if (this.scheduled || this.queues.size === 0) return;
    this.scheduled = true;
    setImmediate(() => this.turn());
  }

  /** One slice of the first peer's oldest job; the peer then goes to the end of the turn order. */
  private turn(): void {
    this.scheduled = false;
    const next = this.queues.entries().next();
    if (next.done) return;
    const [peer, queue] = next.value;
    const job = queue[0]!;
    const until = performance.now() + this.limits.sliceMs;
    let more = true;
    try {
      while ((more = job.steps.step()) && performance.now() < until);
    } catch (err) {
      more = false;
      this.finish(peer, queue, job);
      job.reject(err);
      return this.schedule();
    }
    this.queues.delete(peer);
    if (!more) {
      this.finish(peer, queue, job);
      job.resolve(job.steps.result);
    }
    if (queue.length > 0) this.queues.set(peer, queue);
    this.schedule();
  }

  private finish(peer: string, queue: Job[], job: Job): void {
    queue.shift();
    if (queue.length === 0) this.queues.delete(peer);
    const held = (this.peerBytes.get(peer) ?? 0) - job.bytes;
    if (held > 0) this.peerBytes.set(peer, held);
    else this.peerBytes.delete(peer);
    this.queuedBytes -= job.bytes;
  }
}
