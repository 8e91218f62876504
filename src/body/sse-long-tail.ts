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
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;

export interface LongTailFields {
  /** The kept lines, each ending in LF, for the SSE parser to read as a client would. */
  lines: Buffer;
  /** The block has a `data` line (whose text was not read). */
  sawData: boolean;
}

/** `pieces`: the block's bytes in order, as held (not joined: joining 8 MiB cost more than reading it). */
export function longTailFields(pieces: readonly Buffer[]): LongTailFields {
  const kept: { retry: Buffer | null; id: Buffer | null; event: Buffer | null; sawData: boolean } = { retry: null, id: null, event: null, sawData: false };
  /** The current line's bytes so far, as views of the pieces it spans. */
  let parts: Buffer[] = [];
  let afterCr = false;
  for (const piece of pieces) {
    // A CR that ended the last piece and an LF that starts this one are one line end.
    let start = afterCr && piece[0] === LF ? 1 : 0;
    afterCr = false;
    // Next CR and LF at or after the line's start, each found once by a native search (linear in all).
    let nextLf = piece.indexOf(LF, start);
    let nextCr = piece.indexOf(CR, start);
    while (start < piece.length) {
      if (nextLf !== -1 && nextLf < start) nextLf = piece.indexOf(LF, start);
      if (nextCr !== -1 && nextCr < start) nextCr = piece.indexOf(CR, start);
      const end = nextLf === -1 ? nextCr : nextCr === -1 ? nextLf : Math.min(nextLf, nextCr);
      if (end === -1) {
        parts.push(piece.subarray(start));
        break;
      }
      parts.push(piece.subarray(start, end));
      readLine(parts, kept);
      parts = [];
      if (piece[end] === CR && end + 1 === piece.length) afterCr = true;
      start = end + (piece[end] === CR && piece[end + 1] === LF ? 2 : 1);
    }
  }
  // A line the stream's end cut is read as the decoder reads a short block's: as if it had ended.
  if (parts.length > 0) readLine(parts, kept);
  const lines = [kept.retry, kept.id, kept.event].filter((line): line is Buffer => line !== null);
  return { lines: Buffer.concat(lines.flatMap((line) => [line, Buffer.of(LF)])), sawData: kept.sawData };
}

function readLine(parts: Buffer[], kept: { retry: Buffer | null; id: Buffer | null; event: Buffer | null; sawData: boolean }): void {
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
