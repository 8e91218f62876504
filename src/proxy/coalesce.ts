import { performance } from "node:perf_hooks";
import { Readable } from "node:stream";
import type { ReadGate } from "./read-gate.js";
import type { BodyRead } from "./exchange-record.js";
import { CHUNK_COST_MS } from "./read-scheduler.js";

/** A chunk this large passes on at once; smaller ones are joined up to this size. */
const JOINED_BYTES = 16 * 1024;
/** A run that starts with a chunk this small waits for the end of the loop's turn (see below). */
const TINY_BYTES = 1024;
/**
 * A source paused for its peer's turn reads on past this many chunks held, or when all its peer's paused
 * sources hold more than MAX_PEER_PAUSED_CHUNKS (see `checkValve`): ~400 bytes of heap a chunk, 12 and 38 MiB.
 */
const MAX_PAUSED_CHUNKS = 32 * 1024;
/** A body whose chunks so far (64 or more) average under this many bytes is sent in tiny chunks (`ChunkSizes`). */
const TINY_SENDER_AVERAGE = 64;
const TINY_SENDER_CHUNKS = 64;

/**
 * The sizes of a body's chunks so far. A body sent in tiny chunks is not paused for its sender's turn
 * (read-scheduler.ts): Node's parser would keep each chunk it has read as an object of its own while paused
 * (~400 bytes of heap a byte), promoted to the old heap by the time the pause ends. Its chunks are joined per
 * turn instead (below); the parser's cost per chunk stays (docs/reliability.md).
 */
export class ChunkSizes {
  bytes = 0;
  chunks = 0;

  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    this.chunks++;
  }

  get tiny(): boolean {
    return this.chunks >= TINY_SENDER_CHUNKS && this.bytes < this.chunks * TINY_SENDER_AVERAGE;
  }

  /** Whether a body read in turns (`read.turn`) may be read now, the exchange's own `gate` open. */
  static readable(gate: { open: boolean }, turn: { open: boolean } | undefined, sizes: ChunkSizes): boolean {
    return gate.open && (turn?.open !== false || sizes.tiny);
  }
}
const MAX_PEER_PAUSED_CHUNKS = 96 * 1024;
const VALVE_CHECK_MS = 10;

/** A body read in its sender's turn (read-scheduler.ts): the turn's gate, and where its loop time is charged. */
type ScheduledRead = Omit<BodyRead, "gate">;

/**
 * `source`'s bytes, unchanged, with the small chunks that one read of its socket yields joined into one (up to
 * 16 KiB): a peer that sends its body in 1-byte chunks (a chunked body parses into one `data` event per chunk)
 * then costs one write onwards and one tap call per read, not a million of each. Joined chunks go on at the end
 * of the tick they arrived in, or for a run that starts with a tiny chunk, at the end of the loop's turn: a
 * request's body is parsed by Node's server from C++ (the parser consumes the socket), and each chunk's `data`
 * event is a tick of its own, so the end of the tick would join nothing there. Nothing is held back for bytes
 * not yet read. A lone chunk (the usual case) goes on as it is, uncopied; several are copied once, when
 * joined. A plain Readable fed from `data` events (not a Transform): per chunk, only a push onto the list;
 * back-pressure pauses the source.
 *
 * `gate` closed: the source is paused too, whatever the reader downstream wants, and read on once it opens.
 * Paused is the source itself (an IncomingMessage: its socket is read no more once its own small buffer is
 * full), and only this stream resumes it: pausing the socket under it would not hold, as the message's
 * reads start it again.
 *
 * `scheduled.turn` closed (its sender has had its share of the loop): paused likewise, within a bound on
 * what the pause keeps in memory. `scheduled.spent`: told the loop time each chunk cost (what is done with it
 * downstream, synchronously: the write on and the taps), plus a constant per source chunk for the parser's
 * work before it (read-scheduler.ts).
 */
export function coalesced(source: Readable, gate?: ReadGate, scheduled?: ScheduledRead): Readable {
  const turn = scheduled?.turn?.gate;
  const spent = scheduled?.turn?.spent;
  const peerHeld = scheduled?.turn?.held;
  /** What this source holds while paused for its turn, as counted in `peerHeld`. */
  let holding = 0;
  const count = (chunks: number): void => {
    if (peerHeld) peerHeld.chunks += chunks - holding;
    holding = chunks;
  };
  /** The turn's pause did not hold at the socket (see below): read on until the turn comes back. */
  let overflowed = false;
  const sizes = new ChunkSizes();
  const held = (): boolean => gate?.open === false || (turn?.open === false && !overflowed && !sizes.tiny);
  /** The receiver takes more (its buffer is under its bound): a gate that opens reads on only then. */
  let wanted = true;
  const out = new Readable({
    read: () => {
      wanted = true;
      if (!held()) source.resume();
    },
  });
  const follow = (): void => void (held() || !wanted ? source.pause() : !out.destroyed && source.resume());
  let valve: NodeJS.Timeout | null = null;
  const stopValve = (): void => {
    if (valve) clearInterval(valve);
    valve = null;
    count(0);
  };
  // A paused source stops its socket only once Node's buffer for it is full (16 KiB: engine.ts) and the read
  // under way is parsed, every chunk kept as an object of its own: for a sender of tiny chunks ~400 bytes of
  // heap per byte held. Past the bounds the pause costs more memory than it saves loop, and the source reads on
  // until its turn comes back (the exchange's own gate, a memory bound of its own, always holds).
  const checkValve = (): void => {
    const chunks = Math.ceil(source.readableLength / Math.max(1, sizes.chunks > 0 ? sizes.bytes / sizes.chunks : JOINED_BYTES));
    count(chunks);
    if (chunks <= MAX_PAUSED_CHUNKS && (peerHeld?.chunks ?? 0) <= MAX_PEER_PAUSED_CHUNKS) return;
    overflowed = true;
    stopValve();
    follow();
  };
  const unwatch: (() => void)[] = [];
  if (gate) unwatch.push(gate.watch(follow));
  if (turn) {
    unwatch.push(
      turn.watch((open) => {
        if (open) {
          overflowed = false;
          stopValve();
        } else valve ??= setInterval(checkValve, VALVE_CHECK_MS).unref();
        follow();
      }),
    );
  }
  const stop = (): void => {
    stopValve();
    unwatch.forEach((u) => u());
  };
  out.once("close", stop);
  source.once("close", stop);
  // The run being joined: its first chunk as it came (passed on uncopied if it stays alone, the usual case),
  // then a slab the run is copied into, so that a sender of tiny chunks costs one small object per chunk only
  // until it is copied, never a list of them held to the end of the turn.
  let first: Buffer | null = null;
  let slab: Buffer | null = null;
  let used = 0;
  let tickScheduled = false;
  const pass = (chunk: Buffer): void => {
    const t0 = spent ? performance.now() : 0;
    if (!out.push(chunk)) {
      wanted = false;
      source.pause();
    }
    spent?.(performance.now() - t0);
  };
  const release = (): void => {
    tickScheduled = false;
    if (first !== null) {
      const alone = first;
      first = null;
      if (!out.destroyed) pass(alone);
      return;
    }
    if (used === 0 || slab === null) return;
    // A slab mostly empty is copied out and kept for the next run: what waits downstream (a slow receiver)
    // is about what was sent, not 16 KiB for every few bytes.
    const joined = used < JOINED_BYTES / 4 ? Buffer.from(slab.subarray(0, used)) : slab.subarray(0, used);
    if (joined.buffer === slab.buffer) slab = null;
    used = 0;
    if (!out.destroyed) pass(joined);
  };
  const schedule = (size: number): void => {
    if (tickScheduled) return;
    tickScheduled = true;
    if (size < TINY_BYTES) setImmediate(release);
    else process.nextTick(release);
  };
  const join = (chunk: Buffer): void => {
    slab ??= Buffer.allocUnsafe(JOINED_BYTES);
    chunk.copy(slab, used);
    used += chunk.length;
  };
  source.on("data", (chunk: Buffer) => {
    spent?.(CHUNK_COST_MS);
    sizes.add(chunk);
    if (chunk.length === 0) return;
    if (first === null && used === 0) {
      if (chunk.length >= JOINED_BYTES) return pass(chunk);
      first = chunk;
      return schedule(chunk.length);
    }
    if (first !== null) {
      const earlier = first;
      first = null;
      join(earlier);
    }
    if (used + chunk.length > JOINED_BYTES) {
      release();
      if (chunk.length >= JOINED_BYTES) return pass(chunk);
      first = chunk;
      return schedule(chunk.length);
    }
    join(chunk);
    if (used >= JOINED_BYTES) release();
  });
  source.on("end", () => {
    release();
    out.push(null);
  });
  // A `data` listener starts the source flowing: a gate closed already (the exchange was paused from its
  // start) must hold it too, not only a gate that closes later.
  if (held()) source.pause();
  if (turn && !turn.open) valve = setInterval(checkValve, VALVE_CHECK_MS).unref();
  return out;
}
