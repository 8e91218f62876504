import { isUtf8 } from "node:buffer";
import { createParser, type EventSourceMessage, type EventSourceParser, type ParseError } from "eventsource-parser";
import { GrowingBuffer } from "../budget/growing-buffer.js";
import { overBudgetMessage, type Charge } from "../budget/inspect-budget.js";
import { SseBlankLines } from "./sse-blank-lines.js";
import { longTailFields } from "./sse-long-tail.js";

/** One dispatched SSE event. `byteOffset`: where its block starts in the (content-decoded) stream. */
export interface SseEvent {
  event?: string;
  id?: string;
  data: string;
  retry?: number;
  byteOffset?: number;
  /** The event's bytes were not valid UTF-8: `data` has U+FFFD where they were (a receiver may drop them instead). */
  invalidUtf8?: true;
}

export type SseRecord =
  | { type: "event"; event: SseEvent }
  /** A `:` line (only with `includeComments`), without the colon and one following space. */
  | { type: "comment"; comment: string }
  /** A block with `id:` and/or `retry:` but no `data:`: no event, yet it changes the last event id / retry delay. */
  | { type: "meta"; id?: string; retry?: number; byteOffset: number }
  /**
   * The stream ended inside an event. Per the SSE spec it is discarded; `event` is what it would have been.
   * A block longer than 64 KiB is not decoded (`uninspected`): only its whole `retry:`, `id:` and `event:`
   * lines are read, what a client acts on or would have; its data is not.
   */
  | { type: "incomplete"; byteOffset: number; bytes: number; event?: SseEvent; uninspected?: { event?: string; id?: string; retry?: number } }
  | { type: "problem"; code: "event_too_large" | "over_budget" | "sse_invalid_field"; message: string; byteOffset: number };

export interface SseDecoderOptions {
  /**
   * Largest event block kept: its lines and line ends, up to the first byte of the blank line. A bigger
   * one is dropped and reported.
   */
  maxEventBytes: number;
  /** What the bytes of an event not yet ended are charged to; past what it grants, the event is dropped (`over_budget`). */
  charge?: Charge;
  includeComments?: boolean;
  /** Invalid lines reported one by one before the rest are only counted. Default 3. */
  maxFieldProblems?: number;
  onRecord(record: SseRecord): void;
}

export interface SseDecoder {
  data(chunk: Buffer): void;
  end(): void;
  /** Bytes seen so far. */
  readonly bytes: number;
}

export function createSseDecoder(options: SseDecoderOptions): SseDecoder {
  return new BoundedSseDecoder(options);
}

/** An unterminated block longer than this at the stream's end is read for its field lines only (sse-long-tail.ts). */
const DECODED_TAIL_BYTES = 64 * 1024;

/**
 * eventsource-parser does the SSE field grammar; this wrapper finds the blank lines itself, on the raw
 * bytes (`SseBlankLines`, shared with the enforce-mode framer), so it can feed the parser one whole event
 * block at a time. That gives each event its byte offset and lets it drop a block that outgrows
 * `maxEventBytes` (or the inspection budget) while it is still bytes: until its blank line a block is held
 * once, as raw bytes in one growing buffer; its text exists only while the parser reads it.
 */
class BoundedSseDecoder implements SseDecoder {
  private readonly parser: EventSourceParser;
  // `ignoreBOM`: keep U+FEFF in the text so the parser alone strips it, exactly once, like the scanner below.
  private readonly text = new TextDecoder("utf-8", { ignoreBOM: true });
  private offset = 0;
  private readonly lines = new SseBlankLines();
  private blockStart = 0;
  /** Dropping an oversized block until its blank line. */
  private skipping = false;
  private ended = false;
  private block: { id?: string; retry?: number; dispatched: boolean } = { dispatched: false };
  /** Set while `end()` flushes an unterminated block: its output is reported as incomplete. */
  private flushed: { event?: SseEvent; touched: boolean } | null = null;
  private fieldProblems = 0;
  /** The current block's bytes that came in earlier chunks (it spans them): fed to the parser at its end. */
  private readonly held: GrowingBuffer;
  private blockInvalid = false;

  constructor(private readonly options: SseDecoderOptions) {
    this.held = new GrowingBuffer(options.charge, options.maxEventBytes);
    this.parser = createParser({
      onEvent: (message) => this.onEvent(message),
      onId: (id) => (this.block.id = id),
      onRetry: (retry) => (this.block.retry = retry),
      onComment: options.includeComments ? (comment) => options.onRecord({ type: "comment", comment }) : undefined,
      onError: (error) => this.onParseError(error),
    });
  }

  get bytes(): number {
    return this.offset;
  }

  data(chunk: Buffer): void {
    if (this.ended || chunk.length === 0) return;
    const base = this.offset;
    this.offset += chunk.length;
    let feedFrom = 0;
    this.lines.scan(chunk, {
      crlfContinued: () => {
        if (this.blockStart === base) this.blockStart = base + 1;
      },
      blank: (lineEnd, next) => {
        // Size up to the blank line's first byte: whether a LF follows a CR may only show in the next chunk.
        const size = base + lineEnd + 1 - this.blockStart;
        if (this.skipping) this.skipping = false;
        else if (size > this.options.maxEventBytes) this.dropBlock(size, "event_too_large");
        else this.feedCompleteBlock(chunk.subarray(feedFrom, next));
        feedFrom = next;
        this.blockStart = base + next;
      },
    });

    if (this.skipping) return;
    const pending = this.offset - this.blockStart;
    if (pending > this.options.maxEventBytes) {
      this.dropBlock(pending, "event_too_large");
      this.skipping = true;
    } else if (feedFrom < chunk.length && !this.held.append(chunk.subarray(feedFrom))) {
      this.dropBlock(pending, "over_budget");
      this.skipping = true;
    }
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    const bytes = this.offset - this.blockStart;
    if (this.skipping) {
      this.options.onRecord({ type: "incomplete", byteOffset: this.blockStart, bytes });
    } else if (this.held.length > DECODED_TAIL_BYTES) {
      this.endInLongBlock(bytes);
    } else {
      const rest = this.held.view();
      this.blockInvalid = !isUtf8(rest);
      // The block's whole lines first (no blank line among them: nothing dispatches), so that a `retry:` line
      // that was whole counts as touching the stream, as a cut one does not.
      const text = this.text.decode(rest);
      this.held.clear();
      if (text) this.parser.feed(text);
      this.flushed = { touched: this.block.retry !== undefined };
      // Terminates a partial line (or completes a split CRLF), then a blank line dispatches what is pending.
      if (bytes > 0) this.parser.feed("\n\n");
      const { event } = this.flushed;
      if (event || this.flushed.touched || this.block.id !== undefined) {
        this.options.onRecord({ type: "incomplete", byteOffset: this.blockStart, bytes, ...(event ? { event } : {}) });
      }
    }
    const unreported = this.fieldProblems - this.fieldProblemLimit();
    if (unreported > 0) {
      this.problem("sse_invalid_field", `${unreported} more invalid SSE lines not reported one by one`);
    }
  }

  /**
   * A long block the end leaves undispatched: the parser reads only its whole retry, id and event lines (and
   * an empty data line in place of its data), so that what a client would act on is reported as it would read it.
   */
  private endInLongBlock(bytes: number): void {
    const { lines, sawData } = longTailFields(this.held.pieces(), this.blockStart === 0);
    this.held.clear();
    this.flushed = { touched: false };
    this.parser.feed(`${new TextDecoder("utf-8", { ignoreBOM: true }).decode(lines)}${sawData ? "data:\n" : ""}\n`);
    const { event } = this.flushed;
    const fields = { ...(event?.event !== undefined ? { event: event.event } : {}), ...(this.block.id !== undefined ? { id: this.block.id } : {}), ...(this.block.retry !== undefined ? { retry: this.block.retry } : {}) };
    this.options.onRecord({ type: "incomplete", byteOffset: this.blockStart, bytes, uninspected: fields });
  }

  /** CR and LF never occur inside a UTF-8 sequence: a block is valid UTF-8 or not on its own. */
  private feedCompleteBlock(last: Buffer): void {
    const whole = this.held.length > 0 ? Buffer.concat([this.held.view(), last]) : last;
    this.held.clear();
    this.blockInvalid = !isUtf8(whole);
    this.parser.feed(this.text.decode(whole, { stream: true }));
    const { id, retry, dispatched } = this.block;
    if (!dispatched && (id !== undefined || retry !== undefined)) {
      this.options.onRecord({
        type: "meta",
        ...(id !== undefined ? { id } : {}),
        ...(retry !== undefined ? { retry } : {}),
        byteOffset: this.blockStart,
      });
    }
    this.block = { dispatched: false };
  }

  private dropBlock(size: number, code: "event_too_large" | "over_budget"): void {
    const at = `SSE event at byte ${this.blockStart}`;
    this.problem(code, code === "over_budget" ? `${overBudgetMessage(`${at} (${size} bytes so far)`)}; dropped` : `${at} exceeds ${this.options.maxEventBytes} bytes (${size} so far); dropped`);
    this.held.clear();
    this.parser.reset({ consume: false });
    this.text.decode(); // forget a half-decoded character of the dropped block
    // A fresh parser would strip a U+FEFF at the start of its input; a BOM is only valid at the stream start.
    this.parser.feed("\n");
    this.block = { dispatched: false };
  }

  private onEvent(message: EventSourceMessage): void {
    const event: SseEvent = { data: message.data };
    if (message.event !== undefined) event.event = message.event;
    if (message.id !== undefined) event.id = message.id;
    if (this.block.retry !== undefined) event.retry = this.block.retry;
    event.byteOffset = this.blockStart;
    if (this.blockInvalid) event.invalidUtf8 = true;
    this.block.dispatched = true;
    if (this.flushed) this.flushed.event = event;
    else this.options.onRecord({ type: "event", event });
  }

  private onParseError(error: ParseError): void {
    if (this.flushed) {
      this.flushed.touched = true; // the stream was cut inside a line
      return;
    }
    this.fieldProblems++;
    if (this.fieldProblems <= this.fieldProblemLimit()) {
      this.problem("sse_invalid_field", `invalid SSE line: ${error.message.slice(0, 120)}`);
    }
  }

  private fieldProblemLimit(): number {
    return this.options.maxFieldProblems ?? 3;
  }

  private problem(code: "event_too_large" | "over_budget" | "sse_invalid_field", message: string): void {
    this.options.onRecord({ type: "problem", code, message, byteOffset: this.blockStart });
  }
}
