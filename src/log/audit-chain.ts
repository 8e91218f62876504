import { createHash } from "node:crypto";

export const GENESIS_HASH = `sha256:${"0".repeat(64)}`;

export function lineHash(line: string): string {
  return `sha256:${createHash("sha256").update(line).digest("hex")}`;
}

/**
 * Sits between pino and the file: every record gains `seq` and `prevHash` (the sha256 of the previous
 * line as written), so that an edited, removed or reordered record breaks the chain where it happened.
 * pino hands over one whole record per write, ending in a newline.
 */
export class AuditChain {
  private seq = 0;
  private prev = GENESIS_HASH;

  constructor(private readonly next: { write(chunk: string): unknown }) {}

  write(record: string): boolean {
    const body = record.endsWith("\n") ? record.slice(0, -1) : record;
    if (!body.endsWith("}")) {
      this.next.write(record);
      return true;
    }
    const chained = `${body.slice(0, -1)}${body.length > 2 ? "," : ""}"seq":${this.seq},"prevHash":"${this.prev}"}`;
    this.seq++;
    this.prev = lineHash(chained);
    this.next.write(`${chained}\n`);
    return true;
  }
}

export interface ChainProblem {
  file: string;
  line: number;
  seq: number | null;
  problem: string;
}

export interface ChainReport {
  records: number;
  problems: ChainProblem[];
  /** The chain's last record was `stop`: the log ended cleanly. */
  endedCleanly: boolean;
}

/** Checks one or more log files given in order (oldest rotated file first). */
export function verifyChain(files: readonly { name: string; text: string }[]): ChainReport {
  const problems: ChainProblem[] = [];
  let prevLine: string | null = null;
  let prevSeq: number | null = null;
  let records = 0;
  let lastEvent: unknown = null;
  for (const { name, text } of files) {
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    lines.forEach((line, index) => {
      const at = { file: name, line: index + 1 };
      let record: { seq?: unknown; prevHash?: unknown; event?: unknown };
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        problems.push({ ...at, seq: null, problem: "not a JSON record (edited or cut short)" });
        prevLine = line;
        prevSeq = prevSeq === null ? null : prevSeq + 1;
        return;
      }
      records++;
      lastEvent = record.event;
      const seq = typeof record.seq === "number" ? record.seq : null;
      if (seq === null || typeof record.prevHash !== "string") {
        problems.push({ ...at, seq, problem: "record has no seq/prevHash (written without --audit-chain, or edited)" });
      } else if (prevLine === null) {
        if (seq === 0 && record.prevHash !== GENESIS_HASH) problems.push({ ...at, seq, problem: "first record does not start the chain" });
        if (seq !== 0) problems.push({ ...at, seq, problem: `chain starts at seq ${seq}: records 0-${seq - 1} are in an earlier file (give it first)` });
      } else {
        const expectedSeq = (prevSeq ?? -1) + 1;
        const linked = record.prevHash === lineHash(prevLine);
        if (seq > expectedSeq) problems.push({ ...at, seq, problem: `${seq - expectedSeq} record(s) removed before this one (seq ${expectedSeq}-${seq - 1})` });
        else if (seq < expectedSeq) problems.push({ ...at, seq, problem: `out of order: seq ${seq} after seq ${expectedSeq - 1} (reordered or duplicated)` });
        else if (!linked) problems.push({ file: name, line: index, seq: seq - 1, problem: "record was edited (its hash does not match the next record's prevHash)" });
      }
      prevLine = line;
      prevSeq = seq ?? prevSeq;
    });
  }
  return { records, problems, endedCleanly: lastEvent === "stop" };
}
