/**
 * A long message's content scan runs in slices (src/policy/sliced-scan.ts): the event loop serves other
 * connections between them, peers take turns, what waits is bounded in bytes, and the findings are those of
 * the scan at once (a secret at the end of a long message is still found; a scan that fails, fails closed).
 */
import { describe, expect, it } from "vitest";
import { createPolicy } from "../../src/policy/create-policy.js";
import { parsePolicy } from "../../src/policy/load-config.js";
import { SlicedScans, type Steps } from "../../src/policy/sliced-scan.js";
import { rpcRecord } from "../../src/records/rpc-record.js";
import { rpcEvent } from "./policy-fixtures.js";

/** `n` steps, then the result `name`; `log` gets `name` when it is done. */
function work(name: string, n: number, log: string[]): Steps<string> {
  let left = n;
  return {
    step: () => {
      if (left === 0) return false;
      left--;
      if (left === 0) log.push(name);
      return left > 0;
    },
    get result() {
      return name;
    },
    skipped: (reason) => `${name} skipped: ${reason}`,
  };
}

// One step a slice: the turn order is the test's, not the clock's.
const stepwise = (o: Partial<{ perPeer: number; total: number }> = {}): SlicedScans => new SlicedScans({ sliceMs: 0, minBytes: 10, perPeer: o.perPeer ?? 1000, total: o.total ?? 10_000 });

describe("sliced scans", () => {
  it("gives the loop back between slices: what was queued on the loop meanwhile runs before a long scan ends", async () => {
    const log: string[] = [];
    const scans = stepwise();
    const done = scans.run("client a", 100, work("scan", 50, log));
    expect(done).toBeInstanceOf(Promise);
    setImmediate(() => log.push("other connection"));
    await expect(done).resolves.toBe("scan");
    expect(log).toEqual(["other connection", "scan"]);
    expect(scans.waitingBytes).toBe(0);
  });

  it("lets peers take turns: one peer's queue of long messages does not hold another peer's back", async () => {
    const log: string[] = [];
    const scans = stepwise();
    const hostile = [1, 2, 3].map((i) => scans.run("client hostile", 100, work(`hostile ${i}`, 5, log)));
    const other = scans.run("server other", 100, work("other", 5, log));
    await Promise.all([...hostile, other]);
    expect(log.indexOf("other")).toBeLessThan(log.indexOf("hostile 2"));
  });

  it("scans a short message at once", () => {
    const log: string[] = [];
    expect(stepwise().run("client a", 5, work("short", 3, log))).toBe("short");
  });

  it("bounds what waits in bytes, per peer and in all: past that a message is not scanned, and says why", async () => {
    const log: string[] = [];
    const scans = stepwise({ perPeer: 250, total: 400 });
    const first = [scans.run("client a", 100, work("a1", 3, log)), scans.run("client a", 100, work("a2", 3, log))];
    expect(scans.run("client a", 100, work("a3", 3, log))).toMatch(/^a3 skipped: not scanned: this peer's \(200 bytes\)/);
    const b = scans.run("client b", 150, work("b1", 3, log));
    expect(scans.run("client c", 100, work("c1", 3, log))).toMatch(/^c1 skipped: not scanned: all peers' \(350 bytes\)/);
    await Promise.all([...first, b]);
    expect(scans.waitingBytes).toBe(0);
    expect(log).not.toContain("a3");
  });

  it("scans a message longer than a peer's share (or all) when nothing waits (--max-inspect-bytes past 8 MiB)", async () => {
    const log: string[] = [];
    const scans = stepwise({ perPeer: 250, total: 400 });
    await expect(scans.run("client a", 500, work("alone", 3, log))).resolves.toBe("alone");
    expect(log).toEqual(["alone"]);
    expect(scans.waitingBytes).toBe(0);
  });

  it("rejects when a step throws, and goes on with the next", async () => {
    const scans = stepwise();
    const failing = scans.run("client a", 100, {
      step: () => {
        throw new Error("scanner failed");
      },
      result: "never",
      skipped: () => "never",
    });
    const next = scans.run("client a", 100, work("next", 2, []));
    await expect(failing).rejects.toThrow("scanner failed");
    await expect(next).resolves.toBe("next");
  });
});

describe("a policy that scans long messages in slices", () => {
  const yaml = "mode: enforce\ndetectors: { secrets: deny, pii: flag, hiddenText: flag, poisoning: flag, toolPinning: off, schema: off }\n";
  // A token of the GitHub shape at the end of 300 KB of text.
  const token = `ghp_${"a1B2c3D4e5".repeat(4)}`;
  const long = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { text: `${"lorem ipsum ".repeat(25_000)}${token}` } } };

  it("decides later, with the findings of the scan at once (the secret at the end still denies)", async () => {
    const sliced = createPolicy(parsePolicy(yaml, "test.yaml"), { pins: null, slicedScans: true });
    const atOnce = createPolicy(parsePolicy(yaml, "test.yaml"), { pins: null });
    const later = sliced.decide(rpcEvent(long));
    expect(later).toBeInstanceOf(Promise);
    const decision = await later;
    expect(decision).toEqual(atOnce.decide(rpcEvent(long)));
    expect(decision.action).toBe("deny");
    expect(decision.rules.map((r) => r.name)).toContain("detector:secrets");
  });

  it("keeps judge() at once (other readings of a message are judged there)", () => {
    const sliced = createPolicy(parsePolicy(yaml, "test.yaml"), { pins: null, slicedScans: true });
    expect(sliced.judge(rpcEvent(long), { observe: false }).action).toBe("deny");
  });
});

describe("a long message left unscanned (its peer's scans queue is full)", () => {
  it("is flagged or denied as its detectors say, and its record carries no payload, only its size", async () => {
    const policy = createPolicy(parsePolicy("mode: enforce\ndetectors: { secrets: deny, pii: flag }\n", "test.yaml"), { pins: null, slicedScans: true });
    // Built at run time so that no complete key sits in the source.
    const key = ["AKIA", "Z7QW3RTY5UIOPL2K"].join("");
    const call = (id: number): ReturnType<typeof rpcEvent> =>
      rpcEvent({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { text: `${"x".repeat(1024 * 1024)} ${key}` } } });
    // 8 MiB of one peer's long messages may wait (about eight of these): past that, the next is not scanned.
    const waiting = Array.from({ length: 8 }, (_, i) => policy.decide(call(i)));
    const unscanned = call(99);
    const decision = policy.decide(unscanned);
    expect(decision).not.toBeInstanceOf(Promise);
    const d = decision as Exclude<typeof decision, Promise<unknown>>;
    expect(d.action).toBe("deny");
    expect(d.rules.find((r) => r.name === "detector:secrets")?.findings?.[0]).toMatchObject({ type: "not_scanned", detail: expect.stringMatching(/^not scanned: this peer's/) });
    unscanned.decision = d;
    for (const payloads of ["full", "truncated"] as const) {
      const record = rpcRecord(unscanned, { payloads, maxPayloadBytes: 65536 });
      expect(JSON.stringify(record)).not.toContain(key);
      expect(JSON.stringify(record)).not.toContain("xxxx");
      expect(record.params).toMatchObject({ omitted: true });
    }
    for (const w of await Promise.all(waiting)) expect(w.action).toBe("deny");
  });
});
