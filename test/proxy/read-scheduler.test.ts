/**
 * The scheduler's rules on a clock of the test's own: a peer that takes the loop from another is paused,
 * and read again in bounded time; a peer alone (or with only the server of its own exchanges), or on an idle
 * loop, never is.
 */
import { describe, expect, it } from "vitest";
import { ReadScheduler } from "../../src/proxy/read-scheduler.js";

function rig(utilization: number) {
  let now = 0;
  const clock = { now: () => now, utilization: () => utilization };
  const scheduler = new ReadScheduler(clock);
  /** `ms` of wall time in ticks of 20 ms, each charging the given peers' turns their loop time. */
  const run = (ms: number, each: () => void = () => {}): void => {
    for (let t = 0; t < ms; t += 20) {
      now += 20;
      each();
      scheduler.tick();
    }
  };
  return { scheduler, run };
}

describe("the read scheduler", () => {
  it("pauses a peer that costs many times another active peer on a busy loop, and reads it again in bounded time", () => {
    const { scheduler, run } = rig(0.95);
    const hostile = scheduler.exchange("client 127.0.0.2", "server 127.0.0.1:1");
    const light = scheduler.exchange("client 127.0.0.1", "server 127.0.0.1:2");
    let pausedTicks = 0;
    let longestPause = 0;
    let pause = 0;
    run(2_000, () => {
      light.request.spent(1);
      light.response.spent(1);
      if (hostile.request.gate.open) {
        hostile.request.spent(18);
        pause = 0;
      } else {
        pausedTicks++;
        pause += 20;
        longestPause = Math.max(longestPause, pause);
      }
    });
    // Paused for most of the time, never for longer than the bound (plus the tick that sees it).
    expect(pausedTicks).toBeGreaterThan(50);
    expect(longestPause).toBeLessThanOrEqual(500 + 20);
    expect(light.request.gate.open && light.response.gate.open).toBe(true);
    expect(scheduler.usage().pauses).toBeGreaterThan(0);
    hostile.end();
    light.end();
    scheduler.close();
  });

  it("gives a peer read again after the longest pause at least 50 ms of loop time before it is paused again", () => {
    const { scheduler, run } = rig(0.95);
    const hostile = scheduler.exchange("client 127.0.0.2", "server 127.0.0.1:1");
    const light = scheduler.exchange("client 127.0.0.1", "server 127.0.0.1:2");
    run(200, () => light.request.spent(1));
    // One long step: its cost stays over the light peer's for longer than the longest pause.
    hostile.request.spent(400);
    expect(hostile.request.gate.open).toBe(false);
    let waited = 0;
    for (; waited < 1_000 && !hostile.request.gate.open; waited += 20) run(20, () => light.request.spent(1));
    expect(waited).toBeLessThanOrEqual(500 + 20);
    // Read again: each tick it spends 10 ms while it may, until it is paused again.
    let spentInRun = 0;
    for (let i = 0; i < 20 && hostile.request.gate.open; i++) {
      run(20, () => {
        light.request.spent(1);
        hostile.request.spent(10);
        spentInRun += 10;
      });
    }
    expect(spentInRun).toBeGreaterThanOrEqual(50);
    hostile.end();
    light.end();
    scheduler.close();
  });

  it("keeps each scheduling step short with exchanges open to 5,000 servers at once (one client can open them)", () => {
    const { scheduler, run } = rig(1);
    const open = Array.from({ length: 5_000 }, (_, i) => scheduler.exchange("client 127.0.0.2", `server 10.0.0.1:${i + 1}`));
    run(100, () => open.forEach((e) => e.response.spent(0.01)));
    // This thread's CPU time, not wall time: a loaded machine does not make it grow. Before: ~450 ms a tick.
    const before = process.threadCpuUsage();
    run(20);
    const used = process.threadCpuUsage(before);
    expect((used.user + used.system) / 1000).toBeLessThan(50);
    open.forEach((e) => e.end());
    scheduler.close();
  });

  it("never pauses a peer alone with the server of its own exchanges, however busy the loop", () => {
    const { scheduler, run } = rig(1);
    const one = scheduler.exchange("client 127.0.0.1", "server 127.0.0.1:2");
    const two = scheduler.exchange("client 127.0.0.1", "server 127.0.0.1:2");
    run(1_000, () => {
      one.request.spent(15);
      two.response.spent(4);
      expect(one.request.gate.open && two.response.gate.open).toBe(true);
    });
    expect(scheduler.usage().pauses).toBe(0);
    one.end();
    two.end();
    scheduler.close();
  });

  it("never pauses a client between two requests to its server (its partner), however busy the loop", () => {
    const { scheduler, run } = rig(1);
    for (let i = 0; i < 20; i++) {
      const one = scheduler.exchange("client 127.0.0.1", "server 127.0.0.1:2");
      run(20, () => one.response.spent(2));
      one.end();
      run(20);
      const two = scheduler.exchange("client 127.0.0.1", "server 127.0.0.1:2");
      run(20, () => two.request.spent(15));
      expect(two.request.gate.open).toBe(true);
      two.end();
    }
    expect(scheduler.usage().pauses).toBe(0);
    scheduler.close();
  });

  it("never pauses on an idle loop, whoever costs what", () => {
    const { scheduler, run } = rig(0.2);
    const heavy = scheduler.exchange("client 127.0.0.2", "server 127.0.0.1:1");
    const light = scheduler.exchange("client 127.0.0.1", "server 127.0.0.1:2");
    run(1_000, () => {
      heavy.request.spent(4);
      light.request.spent(0.1);
    });
    expect(scheduler.usage().pauses).toBe(0);
    heavy.end();
    light.end();
    scheduler.close();
  });

  it("reads a paused peer again once the other peer has gone quiet, and forgets peers with nothing in flight", () => {
    const { scheduler, run } = rig(0.95);
    const hostile = scheduler.exchange("client 127.0.0.2", "server 127.0.0.1:1");
    const light = scheduler.exchange("client 127.0.0.1", "server 127.0.0.1:2");
    run(200, () => {
      if (hostile.request.gate.open) hostile.request.spent(18);
      light.request.spent(1);
    });
    light.end();
    // The light peer charges nothing more: once its active window (1 s) is over, the heavy one reads.
    run(1_300, () => void (hostile.request.gate.open && hostile.request.spent(18)));
    expect(hostile.request.gate.open).toBe(true);
    hostile.end();
    run(3_000);
    expect(scheduler.usage().peers).toBe(0);
    scheduler.close();
  });
});

describe("the read scheduler's bound on a pause", () => {
  it("reads a peer paused for 500 ms again until it has spent its run (50 ms of loop time), not only until the next tick", () => {
    const { scheduler, run } = rig(0.95);
    const hostile = scheduler.exchange("client 127.0.0.2", "server 127.0.0.1:1");
    const light = scheduler.exchange("client 127.0.0.1", "server 127.0.0.1:2");
    // The hostile peer is charged whether or not its bodies are read (new exchanges' heads, say): its cost
    // stays above the light one's, so only the 500 ms bound reads it again.
    run(200, () => {
      light.request.spent(1);
      hostile.request.spent(18);
    });
    expect(hostile.request.gate.open).toBe(false);
    let waited = 0;
    while (!hostile.request.gate.open && waited < 1_000) {
      run(20, () => {
        light.request.spent(1);
        hostile.request.spent(18);
      });
      waited += 20;
    }
    expect(hostile.request.gate.open).toBe(true);
    // Read again: it spends 10 ms a tick of its run; it is not paused before 50 ms are spent.
    let spent = 0;
    while (hostile.request.gate.open && spent < 200) {
      hostile.request.spent(10);
      spent += 10;
      run(20, () => light.request.spent(1));
    }
    expect(spent).toBeGreaterThanOrEqual(50);
    hostile.end();
    light.end();
    scheduler.close();
  });
});
