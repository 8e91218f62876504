/**
 * The spans handed to the SDK and not yet through an export (queued in the BatchSpanProcessor, or in the
 * batch being sent), bounded in count and in estimated bytes: a span that does not fit is not handed over
 * (and is counted as dropped), so the processor's own queue never overflows and the memory held for a slow
 * or absent collector stays within `maxBytes` whatever the spans hold.
 */
export class SpanBudget {
  private readonly held = new Map<string, number>();
  private heldBytes = 0;

  constructor(
    private readonly maxSpans: number,
    private readonly maxBytes: number,
  ) {}

  get spans(): number {
    return this.held.size;
  }

  get bytes(): number {
    return this.heldBytes;
  }

  fits(bytes: number): boolean {
    return this.held.size < this.maxSpans && this.heldBytes + bytes <= this.maxBytes;
  }

  hold(spanId: string, bytes: number): void {
    this.release(spanId);
    this.held.set(spanId, bytes);
    this.heldBytes += bytes;
  }

  /** The span went through an export (sent, refused or timed out). */
  release(spanId: string): void {
    const bytes = this.held.get(spanId);
    if (bytes === undefined) return;
    this.held.delete(spanId);
    this.heldBytes -= bytes;
  }
}

/**
 * What a span holds, estimated in bytes (string lengths, 8 per number or boolean): what the open requests
 * and the export queue are bounded by.
 */
export function spanBytes(span: {
  name: string;
  attributes: Readonly<Record<string, unknown>>;
  events: readonly { name: string; attributes?: Readonly<Record<string, unknown>> }[];
  error?: { message: string } | null;
}): number {
  let bytes = 64 + span.name.length + attributesBytes(span.attributes) + (span.error?.message.length ?? 0);
  for (const event of span.events) bytes += eventBytes(event);
  return bytes;
}

export function eventBytes(event: { name: string; attributes?: Readonly<Record<string, unknown>> }): number {
  return 32 + event.name.length + attributesBytes(event.attributes ?? {});
}

function attributesBytes(attributes: Readonly<Record<string, unknown>>): number {
  let bytes = 0;
  for (const [key, value] of Object.entries(attributes)) {
    bytes += key.length;
    if (typeof value === "string") bytes += value.length;
    else if (Array.isArray(value)) for (const item of value) bytes += typeof item === "string" ? item.length : 8;
    else bytes += 8;
  }
  return bytes;
}
