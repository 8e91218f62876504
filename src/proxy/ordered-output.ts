/**
 * What an event stream sends, in the order its events came: an event whose judgement is still awaited (it
 * waits for shared state) holds everything behind it, injected events and the stream's end included, and
 * the upstream is paused meanwhile, so nothing piles up behind it past one chunk. Once a judgement fails,
 * nothing more of the stream is passed on (its end still comes).
 */
export class OrderedOutput {
  private readonly queue: (Buffer | Promise<Buffer> | (() => void))[] = [];
  private awaiting = false;
  private failed = false;

  constructor(
    private readonly write: (bytes: Buffer) => void,
    private readonly holding: (held: boolean) => void,
    private readonly onFailure: () => void,
  ) {}

  /** Bytes to send, or the promise of them. */
  push(bytes: Buffer | Promise<Buffer>): void {
    this.queue.push(bytes);
    this.pump();
  }

  /** Runs `action` once everything pushed before it is sent. */
  then(action: () => void): void {
    this.queue.push(action);
    this.pump();
  }

  get empty(): boolean {
    return this.queue.length === 0;
  }

  private pump(): void {
    while (!this.awaiting && this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head instanceof Promise) {
        this.awaiting = true;
        this.holding(true);
        head.then(
          (bytes) => this.settle(bytes),
          () => {
            this.failed = true;
            this.onFailure();
            this.settle(Buffer.alloc(0));
          },
        );
        return;
      }
      this.queue.shift();
      if (typeof head === "function") head();
      else if (!this.failed) this.write(head);
    }
  }

  private settle(bytes: Buffer): void {
    this.queue[0] = bytes;
    this.awaiting = false;
    this.holding(false);
    this.pump();
  }
}
