import { SseBlankLines } from "./sse-blank-lines.js";

/**
 * The lines a client acts on in a long SSE block that the stream's end leaves undispatched, found on the
 * bytes, without decoding the block: parsing megabytes of `data:` text only to discard it held the event
 * loop for seconds when a peer closed 40 such streams at once. A client drops such a block, but a whole
 * `retry:` line in it has already set its reconnection delay, and its `id:` and `event:` lines say what the
 * block would have been. Hand-written: no SSE library reads a block without building its text.
 *
 * Kept, in order: the last `retry:` line whose value is digits (a client ignores any other), the last `id:`
 * line without a NUL (likewise), the last `event:` line. A last line the stream's end cuts is read as if it
 * had ended, as the decoder reads a short unterminated block (what the block would have been).
 */

const LF = 0x0a;
const COLON = 0x3a;
const SPACE = 0x20;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export interface LongTailFields {
  /** The kept lines, each ending in LF, for the SSE parser to read as a client would. */
  lines: Buffer;
  /** The block has a `data` line (whose text was not read). */
  sawData: boolean;
}

/**
 * `pieces`: the block's bytes in order, as held (not joined: joining 8 MiB cost more than reading it).
 * `streamStart`: the block starts the stream, whose byte order mark a client strips before its first line.
 */
export function longTailFields(held: readonly Buffer[], streamStart = false): LongTailFields {
  const pieces = streamStart && firstBytes(held, BOM.length).equals(BOM) ? withoutFirstBytes(held, BOM.length) : held;
  const kept: Kept = { retry: null, id: null, event: null, sawData: false };
  /** The current line's bytes so far, as views of the pieces it spans. */
  let parts: Buffer[] = [];
  // SSE line ends as the decoder reads them (LF, CR, CRLF split across pieces or not), found by native search.
  const lineEnds = new SseBlankLines();
  for (const piece of pieces) {
    let from = 0;
    const ended = (lineEnd: number, next: number): void => {
      parts.push(piece.subarray(from, lineEnd));
      readLine(parts, kept);
      parts = [];
      from = next;
    };
    lineEnds.scan(piece, { crlfContinued: () => (from = 1), blank: ended, line: ended });
    if (from < piece.length) parts.push(piece.subarray(from));
  }
  // A line the stream's end cut is read as the decoder reads a short block's: as if it had ended.
  if (parts.length > 0) readLine(parts, kept);
  const lines = [kept.retry, kept.id, kept.event].filter((line): line is Buffer => line !== null);
  return { lines: Buffer.concat(lines.flatMap((line) => [line, Buffer.of(LF)])), sawData: kept.sawData };
}

interface Kept {
  retry: Buffer | null;
  id: Buffer | null;
  event: Buffer | null;
  sawData: boolean;
}

function readLine(parts: Buffer[], kept: Kept): void {
  const head = parts.length === 1 || parts[0]!.length >= 6 ? parts[0]! : firstBytes(parts, 6);
  const whole = (): Buffer => (parts.length === 1 ? parts[0]! : Buffer.concat(parts));
  if (isField(head, "data")) kept.sawData = true;
  else if (isField(head, "retry")) {
    const line = whole();
    if (digitsValue(line, 5)) kept.retry = line;
  } else if (isField(head, "id")) {
    const line = whole();
    if (line.indexOf(0) === -1) kept.id = line;
  } else if (isField(head, "event")) kept.event = whole();
}

/** The first `n` bytes of a line held in parts (a line's head, enough for any field name and its colon). */
function firstBytes(parts: readonly Buffer[], n: number): Buffer {
  const taken: Buffer[] = [];
  let length = 0;
  for (const part of parts) {
    if (length >= n) break;
    taken.push(part.subarray(0, n - length));
    length += taken.at(-1)!.length;
  }
  return Buffer.concat(taken);
}

function withoutFirstBytes(parts: readonly Buffer[], n: number): Buffer[] {
  const rest: Buffer[] = [];
  for (const part of parts) {
    if (n >= part.length) n -= part.length;
    else {
      rest.push(part.subarray(n));
      n = 0;
    }
  }
  return rest;
}

/** `name` alone, or `name:` followed by its value. */
function isField(line: Buffer, name: string): boolean {
  if (line.length < name.length || (line.length > name.length && line[name.length] !== COLON)) return false;
  for (let i = 0; i < name.length; i++) if (line[i] !== name.charCodeAt(i)) return false;
  return true;
}

/** The value after `name:` (and one optional space) is one or more ASCII digits. */
function digitsValue(line: Buffer, nameLength: number): boolean {
  let i = nameLength + 1;
  if (line[i] === SPACE) i++;
  if (i >= line.length) return false;
  for (; i < line.length; i++) if (line[i]! < 0x30 || line[i]! > 0x39) return false;
  return true;
}
