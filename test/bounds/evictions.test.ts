/** Eviction records: the first at once, then one summed record per reason at most every 10 s, and at flush. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { EVICTION_REPORT_EVERY_MS, EvictionReport, type TableEvictedRecord } from "../../src/bounds/evictions.js";
import { RECORD_SCHEMAS } from "../../src/records/schemas/index.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("eviction records", () => {
  it("a flood of evictions makes one record at once, then one sum per 10 s, never lost", () => {
    vi.useFakeTimers();
    const records: TableEvictedRecord[] = [];
    const report = new EvictionReport("legacy_endpoints", { maxEntries: 10, maxBytes: 1_000 }, (r) => records.push(r), () => Date.now());
    report.evicted("bytes", 100);
    expect(records).toHaveLength(1);
    for (let i = 0; i < 999; i++) report.evicted("bytes", 10);
    report.evicted("per_stream", 5);
    expect(records).toHaveLength(1);
    vi.advanceTimersByTime(EVICTION_REPORT_EVERY_MS);
    expect(records.slice(1).map((r) => [r.reason, r.evicted, r.bytes])).toEqual([
      ["bytes", 999, 9_990],
      ["per_stream", 1, 5],
    ]);
    report.evicted("entries", 1);
    report.flush();
    expect(records.reduce((n, r) => n + r.evicted, 0)).toBe(1_002);
    for (const r of records) expect(RECORD_SCHEMAS.table_evicted.safeParse({ level: "warn", time: "2026-11-28T00:00:00.000Z", ...r }).success).toBe(true);
    expect(records[0]!.message).toBe("1 legacy HTTP+SSE endpoints evicted (the table holds at most 1000 bytes)");
  });
});
