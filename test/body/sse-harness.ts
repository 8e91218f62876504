import { createSseDecoder, type SseDecoderOptions, type SseRecord } from "../../src/body/sse-decoder.js";

/** Runs a whole stream, given as chunks, through one decoder and returns every record it produced. */
export function decodeSse(chunks: Iterable<Buffer>, options: Partial<SseDecoderOptions> = {}): SseRecord[] {
  const records: SseRecord[] = [];
  const decoder = createSseDecoder({
    maxEventBytes: 1024 * 1024,
    ...options,
    onRecord: (record) => records.push(record),
  });
  for (const chunk of chunks) decoder.data(chunk);
  decoder.end();
  return records;
}

export function decodeSseText(text: string, options: Partial<SseDecoderOptions> = {}): SseRecord[] {
  return decodeSse([Buffer.from(text, "utf8")], options);
}

export function eventsOf(records: SseRecord[]) {
  return records.flatMap((record) => (record.type === "event" ? [record.event] : []));
}

/** Splits `bytes` at the given offsets (any order, duplicates and out-of-range values allowed). */
export function splitAt(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let start = 0;
  for (const point of points) {
    pieces.push(bytes.subarray(start, point));
    start = point;
  }
  pieces.push(bytes.subarray(start));
  return pieces;
}

export function oneByteAtATime(bytes: Buffer): Buffer[] {
  return Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
}
