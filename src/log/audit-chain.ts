/**
 * `--audit-chain`: every record gains `seq`, `prevHash` (the sha256 of the previous line as written) and
 * `mac` (HMAC-SHA256 of the line up to `mac`, with a key kept beside the CA: see audit-state.ts).
 *
 * The hash chain shows an edited, removed or reordered record to anyone; the MAC makes a record that was
 * not written by the proxy show too, so nobody without the key can cut the log and append a record that
 * passes (a forged `stop`), or rewrite it consistently. What a cut at the end removes is shown by the audit
 * state, which holds the last seq and hash written (audit-verify.ts compares them).
 */
import type { KeyObject } from "node:crypto";
import { nodeCrypto } from "../util/lazy-crypto.js";

export const GENESIS_HASH = `sha256:${"0".repeat(64)}`;
const MAC_PREFIX = "hmac-sha256:";
const SEALED = /,"mac":"hmac-sha256:([0-9a-f]{64})"\}$/;

/** The two uses of the audit key, kept apart so that a sealed state line can never pass as a record. */
export interface AuditKeys {
  readonly records: KeyObject;
  readonly state: KeyObject;
}

// KeyObjects, not Buffers: Node re-imports a Buffer key on every createHmac (~40 µs on Node 24, measured),
// which per record would cost more than writing it.
export function deriveAuditKeys(secret: Buffer): AuditKeys {
  const { createHmac, createSecretKey } = nodeCrypto();
  const derive = (use: string) => createSecretKey(createHmac("sha256", secret).update(`mcp-wiretap audit ${use}`).digest());
  return { records: derive("records"), state: derive("state") };
}

export function lineHash(line: string): string {
  return `sha256:${nodeCrypto().hash("sha256", line, "hex")}`;
}

/** `{…}` → `{…,"mac":"hmac-sha256:<hex>"}`, the MAC taken over the text before it. */
export function seal(unsealed: string, key: KeyObject): string {
  return `${unsealed.slice(0, -1)},"mac":"${macOf(unsealed, key)}"}`;
}

/** The text a line's MAC was taken over, and the MAC; null when the line carries none. */
export function unseal(line: string): { unsealed: string; mac: string } | null {
  const match = SEALED.exec(line);
  if (!match) return null;
  return { unsealed: `${line.slice(0, match.index)}}`, mac: `${MAC_PREFIX}${match[1]}` };
}

export function macOf(text: string, key: KeyObject): string {
  return `${MAC_PREFIX}${nodeCrypto().createHmac("sha256", key).update(text).digest("hex")}`;
}

/** Two MACs are the same, compared in constant time (a timing must not tell how much of a forged one is right). */
export function sameMac(a: string, b: string): boolean {
  return a.length === b.length && nodeCrypto().timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

export interface ChainPosition {
  seq: number;
  /** sha256 of the line with that seq, as written. */
  hash: string;
}

/**
 * Sits between pino and the writer. pino hands over one whole record per write, ending in a newline.
 * `from` continues a chain (the same log file after a restart, from its audit state).
 */
export class AuditChain {
  private seq: number;
  private prev: string;
  private lastPosition: ChainPosition | null;
  private first: string | null = null;

  constructor(
    private readonly next: { write(chunk: string): unknown },
    private readonly keys: AuditKeys,
    from: ChainPosition | null = null,
  ) {
    this.seq = from ? from.seq + 1 : 0;
    this.prev = from ? from.hash : GENESIS_HASH;
    this.lastPosition = from;
  }

  /** The last record handed to the writer. */
  get last(): ChainPosition | null {
    return this.lastPosition;
  }

  /** The chain's identity, the hash of its seq-0 record, once this chain has written it (null when continued). */
  get identity(): string | null {
    return this.first;
  }

  write(record: string): boolean {
    const body = record.endsWith("\n") ? record.slice(0, -1) : record;
    if (!body.endsWith("}")) {
      this.next.write(record);
      return true;
    }
    const unsealed = `${body.slice(0, -1)}${body.length > 2 ? "," : ""}"seq":${this.seq},"prevHash":"${this.prev}"}`;
    const line = seal(unsealed, this.keys.records);
    // Advanced before the write: a write that flushes (and rotates) at once sees this record as the last.
    this.prev = lineHash(line);
    this.lastPosition = { seq: this.seq, hash: this.prev };
    if (this.seq === 0) this.first = this.prev;
    this.seq++;
    this.next.write(`${line}\n`);
    return true;
  }
}
