/** A table shared by peers: past its share a peer loses its own oldest entries; the table's bound still holds. */
import { describe, expect, it } from "vitest";
import type { TableEvictedRecord } from "../../src/bounds/evictions.js";
import { SharedTable } from "../../src/bounds/shared-table.js";

function table(bounds = { maxEntries: 16, maxBytes: 1_600 }) {
  const records: TableEvictedRecord[] = [];
  const evicted: string[] = [];
  const t = new SharedTable<string>("sessions", bounds, (r) => records.push(r), (_v, key) => evicted.push(key));
  return { t, records, evicted };
}

describe("SharedTable", () => {
  it("a peer past its share (an eighth) loses its own oldest entries, never another's", () => {
    const { t, records, evicted } = table();
    t.set("honest", "h", "client 10.0.0.1", 100);
    for (let i = 0; i < 10; i++) t.set(`x${i}`, "x", "client 10.0.0.2", 100);
    // An eighth of 1,600 bytes: one 100-byte entry, then two; 16 entries: two.
    expect(t.usageOf("client 10.0.0.2")).toEqual({ entries: 2, bytes: 200 });
    expect(t.get("honest")).toBe("h");
    expect(evicted).toEqual(["x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"]);
    t.flushEvictions();
    // The first at once, the rest summed at the flush.
    expect(records.map((r) => [r.reason, r.peer, r.evicted, r.bytes])).toEqual([
      ["per_client", "client 10.0.0.2", 1, 100],
      ["per_client", "client 10.0.0.2", 7, 700],
    ]);
    expect(records[0]!.message).toContain("client 10.0.0.2");
  });

  it("the table's own bound still holds over all peers (the oldest of all go), and an entry just set stays", () => {
    const { t, records } = table({ maxEntries: 4, maxBytes: 100_000 });
    const shareless = new SharedTable<string>("pending", { maxEntries: 4, maxBytes: 100_000 }, () => undefined, undefined, { maxEntries: 4, maxBytes: 100_000 });
    for (let i = 0; i < 6; i++) shareless.set(`k${i}`, "v", `server s${i}:443`, 10);
    expect(shareless.values()).toHaveLength(4);
    expect(shareless.has("k0")).toBe(false);
    // One entry larger than the share is kept: the table never evicts what it was just given.
    t.set("big", "b", "server s:443", 90_000);
    expect(t.get("big")).toBe("b");
    expect(records).toEqual([]);
  });

  it("deleting is not an eviction; more than 16 peers in one period: the rest summed without a name", () => {
    const { t, records, evicted } = table({ maxEntries: 8, maxBytes: 8_000 });
    t.set("a", "a", "client 10.0.0.1", 10);
    expect(t.delete("a")).toBe("a");
    expect(evicted).toEqual([]);
    for (let p = 0; p < 20; p++) for (let i = 0; i < 2; i++) t.set(`p${p}-${i}`, "v", `client 10.0.1.${p}`, 10);
    t.flushEvictions();
    // The first eviction is written at once; of the 19 counted after it, 16 peers are named and 3 summed.
    const later = records.slice(1).filter((r) => r.reason === "per_client");
    expect(later.filter((r) => r.peer !== undefined)).toHaveLength(16);
    expect(later.filter((r) => r.peer === undefined).map((r) => r.evicted)).toEqual([3]);
  });
});
