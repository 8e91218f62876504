/**
 * The start-up GC choice (src/proxy/reclaim-buffers.ts, called from cli/main.ts): once chosen, forwarding
 * 4 MiB through the body taps runs a minor collection, and nothing runs before that.
 */
import { PerformanceObserver, constants } from "node:perf_hooks";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { countForwarded, observeForwardedBytes } from "../../src/proxy/body-taps.js";
import { reclaimForwardedBuffers } from "../../src/proxy/reclaim-buffers.js";

async function minorCollectionsDuring(work: () => void): Promise<number> {
  let minor = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) minor++;
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  work();
  await new Promise((resolve) => setTimeout(resolve, 50));
  observer.disconnect();
  return minor;
}

describe("reclaiming forwarded buffers", () => {
  afterEach(() => observeForwardedBytes(null));

  it("runs a minor collection for every 4 MiB forwarded once chosen at start-up", async () => {
    expect(reclaimForwardedBuffers()).toBe(true);
    const source = new PassThrough();
    let counted = 0;
    countForwarded(source, (n) => (counted += n));
    const chunk = Buffer.alloc(64 * 1024);
    const few = await minorCollectionsDuring(() => {
      for (let i = 0; i < 8; i++) source.write(chunk); // 512 KiB: below the threshold
    });
    const many = await minorCollectionsDuring(() => {
      for (let i = 0; i < 16 * 8; i++) source.write(chunk); // 8 MiB more: two reclaims at least
    });
    expect(counted).toBe(136 * 64 * 1024);
    expect(many).toBeGreaterThanOrEqual(2);
    expect(few).toBeLessThan(many);
  });
});
