import { describe, expect, it } from "vitest";
import { WaitingBudget } from "../../src/budget/waiting-budget.js";

/** A stream's source as the budget sees it: whether it is paused now, and how often it was. */
function source(): { paused: boolean; pauses: number; pause: () => () => void } {
  const s = {
    paused: false,
    pauses: 0,
    pause: () => {
      expect(s.paused).toBe(false);
      s.paused = true;
      s.pauses++;
      return () => void (s.paused = false);
    },
  };
  return s;
}

const peers = (server: string, client = "client 127.0.0.1") => ({ client_to_server: client, server_to_client: `server ${server}` });

describe("the budget of what waits behind a judgement", () => {
  it("pauses a stream past its own budget and resumes it once half of it is written", () => {
    const budget = new WaitingBudget(100, 10_000);
    const a = source();
    budget.attach("a", a.pause);
    const first = budget.hold("a", 60);
    const second = budget.hold("a", 40);
    expect(a.paused).toBe(false);
    budget.hold("a", 1);
    expect(a.paused).toBe(true);
    budget.hold("a", 30);
    expect(a.pauses).toBe(1);
    first();
    first();
    expect(a.paused).toBe(true);
    second();
    expect(a.paused).toBe(false);
    expect(budget.usage()).toMatchObject({ used: 31, peakStream: 131, pauses: 1, paused: 0 });
  });

  it("never pauses a stream that waits for nothing, nor one whose source is gone", () => {
    const budget = new WaitingBudget(100, 150);
    const a = source();
    const b = source();
    budget.attach("a", a.pause);
    budget.attach("b", b.pause);
    budget.hold("a", 100);
    budget.hold("gone", 100);
    expect(budget.usage().used).toBe(200);
    // Past the total: b is not paused as long as it adds nothing.
    expect(b.paused).toBe(false);
    budget.detach("a");
    budget.hold("a", 1);
    expect(a.paused).toBe(false);
  });

  it("pauses whichever stream adds while the process is past its total, and resumes them once half of it is written", () => {
    const budget = new WaitingBudget(100, 200);
    const streams = ["a", "b", "c"].map((name) => ({ name, s: source() }));
    for (const { name, s } of streams) budget.attach(name, s.pause);
    const a1 = budget.hold("a", 90);
    const b1 = budget.hold("b", 90);
    expect(streams.map(({ s }) => s.paused)).toEqual([false, false, false]);
    budget.hold("c", 30);
    // c is within its own budget, but the total is passed.
    expect(streams.map(({ s }) => s.paused)).toEqual([false, false, true]);
    const a2 = budget.hold("a", 5);
    expect(streams.map(({ s }) => s.paused)).toEqual([true, false, true]);
    // 215 → 125: not yet half the total; c still holds 30 of its own.
    b1();
    expect(streams.map(({ s }) => s.paused)).toEqual([true, false, true]);
    a1();
    a2();
    expect(streams.map(({ s }) => s.paused)).toEqual([false, false, false]);
    expect(budget.usage()).toMatchObject({ used: 30, streams: 1, paused: 0, pauses: 2, peak: 215 });
  });

  it("pauses every stream that adds while paused ones wait for the total to be half spent, so that they do resume", () => {
    const budget = new WaitingBudget(100, 200);
    const [a, b, c] = [source(), source(), source()];
    budget.attach("a", a.pause);
    budget.attach("b", b.pause);
    budget.attach("c", c.pause);
    const a1 = budget.hold("a", 90);
    const b1 = budget.hold("b", 90);
    budget.hold("c", 30);
    expect(c.paused).toBe(true);
    // b's first bytes written, new ones added: the total stays above half, and b waits too.
    b1();
    budget.hold("b", 10);
    expect(b.paused).toBe(true);
    a1();
    expect([a.paused, b.paused, c.paused]).toEqual([false, false, false]);
  });

  it("gives each sending peer an eighth of the total: one peer's many streams pause only its own", () => {
    const budget = new WaitingBudget(100, 800);
    expect(budget.peerShare).toBe(100);
    const hostile = [source(), source(), source()];
    hostile.forEach((s, i) => budget.attach(`h${i}`, s.pause, peers("evil.example:443")));
    const other = source();
    budget.attach("o", other.pause, peers("good.example:443"));
    const held = hostile.map((_, i) => budget.hold(`h${i}`, 40, "server_to_client"));
    // 120 from one server: the stream that passed its share is paused, the others not (they added before).
    expect(hostile.map((s) => s.paused)).toEqual([false, false, true]);
    budget.hold("h0", 1, "server_to_client");
    expect(hostile.map((s) => s.paused)).toEqual([true, false, true]);
    // Another server's stream adds as much: its own share, untouched.
    budget.hold("o", 90, "server_to_client");
    expect(other.paused).toBe(false);
    // What the client sent is its own: not charged to the server.
    budget.hold("h1", 10, "client_to_server");
    expect(hostile[1]!.paused).toBe(false);
    // While some of its streams wait, the server's other streams that add wait too (past half its share).
    const h1 = budget.hold("h1", 1, "server_to_client");
    expect(hostile[1]!.paused).toBe(true);
    h1();
    expect(hostile[1]!.paused).toBe(true);
    // A new exchange with that server waits from its start; one with the other server does not.
    const late = source();
    budget.attach("h3", late.pause, peers("evil.example:443", "client 10.0.0.2"));
    const fresh = source();
    budget.attach("f", fresh.pause, peers("good.example:443", "client 10.0.0.2"));
    expect([late.paused, fresh.paused]).toEqual([true, false]);
    // The server holds 81, then 41: at half its share, its streams read on.
    held[1]!();
    expect(hostile.map((s) => s.paused)).toEqual([true, true, true]);
    held[2]!();
    expect([...hostile, late].map((s) => s.paused)).toEqual([false, false, false, false]);
  });

  it("resumes a paused stream when its source goes, and forgets streams and peers that hold nothing", () => {
    const budget = new WaitingBudget(10, 100);
    const a = source();
    budget.attach("a", a.pause, peers("x:1"));
    const held = budget.hold("a", 20, "server_to_client");
    expect(a.paused).toBe(true);
    budget.detach("a");
    expect(a.paused).toBe(false);
    held();
    expect(budget.usage()).toMatchObject({ used: 0, streams: 0, paused: 0 });
    expect((budget as unknown as { streams: Map<string, unknown>; peers: Map<string, unknown> }).streams.size).toBe(0);
    expect((budget as unknown as { peers: Map<string, unknown> }).peers.size).toBe(0);
  });
});
