/** A place in the output kept for a held message: what it sends goes out once every place before it has. */
export interface OutputSlot {
  send(bytes: Buffer): void;
  /** Nothing more for this place: what waits behind it goes out. */
  close(): void;
}

interface Slot {
  chunks: Buffer[];
  open: boolean;
}

/**
 * One direction of a stdio launch with `--intercept`: lines go out in the order they came, so a line behind a
 * held one waits for it. What waits is bounded in bytes: past `maxBytes` a line is refused (`send` returns false)
 * and its sender is answered instead.
 */
export class HeldLineQueue {
  private readonly slots: Slot[] = [];
  private waiting = 0;

  constructor(
    private readonly write: (bytes: Buffer) => void,
    private readonly maxBytes: number,
  ) {}

  /** Bytes waiting behind held messages. */
  get waitingBytes(): number {
    return this.waiting;
  }

  send(bytes: Buffer): boolean {
    if (this.slots.length === 0) {
      this.write(bytes);
      return true;
    }
    if (this.waiting + bytes.length > this.maxBytes) return false;
    const last = this.slots[this.slots.length - 1]!;
    if (last.open) this.slots.push({ chunks: [bytes], open: false });
    else last.chunks.push(bytes);
    this.waiting += bytes.length;
    return true;
  }

  reserve(): OutputSlot {
    const slot: Slot = { chunks: [], open: true };
    this.slots.push(slot);
    return {
      send: (bytes) => {
        if (!slot.open) return;
        if (this.slots[0] === slot) this.write(bytes);
        else {
          slot.chunks.push(bytes);
          this.waiting += bytes.length;
        }
      },
      close: () => {
        slot.open = false;
        this.flush();
      },
    };
  }

  private flush(): void {
    while (this.slots.length > 0 && !this.slots[0]!.open) this.drain(this.slots.shift()!);
    // The new head may be a held message's place that already has bytes (sent while it was not first).
    const head = this.slots[0];
    if (head) this.drain(head);
  }

  /** Writes what waits in `slot`, and forgets it. */
  private drain(slot: Slot): void {
    for (const chunk of slot.chunks) {
      this.waiting -= chunk.length;
      this.write(chunk);
    }
    slot.chunks = [];
  }
}
