/**
 * A long message is judged in short steps (issue 33): the content scan of a 6 MiB `initialize` (the
 * detectors' patterns over 2,000,000 characters) held the event loop for 100–300 ms in one piece, each
 * message back to back; sliced (src/policy/sliced-scan.ts), no step of its judgement takes more than a few
 * milliseconds beyond one text's scan.
 */
import { describe, expect, it } from "vitest";
import { createPolicy } from "../../src/policy/create-policy.js";
import { parsePolicy } from "../../src/policy/load-config.js";
import { longestStep } from "../helpers/longest-step.js";
import { rpcEvent } from "./policy-fixtures.js";

const MiB = 1024 * 1024;
const POLICY = "mode: enforce\ndetectors: { secrets: deny, pii: flag, hiddenText: flag, poisoning: flag }\n";
/** Texts of 16 KiB each, as a long argument list would carry them; one text is the scan's smallest step. */
const params = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" }, pad: Array.from({ length: (6 * MiB) / (16 * 1024) }, (_, i) => `the quick brown fox ${i} jumps over 12 lazy dogs. `.repeat(16 * 1024 / 48)) };
const LONG = { jsonrpc: "2.0", id: 1, method: "initialize", params };

describe("a long message's judgement", () => {
  it("holds the loop for no more than a few milliseconds at a time, and still finds what the scan at once finds", async () => {
    const sliced = createPolicy(parsePolicy(POLICY, "test.yaml"), { pins: null, slicedScans: true });
    const event = rpcEvent(LONG);
    let decision: unknown;
    const worst = await longestStep(async () => {
      decision = await sliced.decide(event);
    });
    // Before slicing: 100–300 ms in one step on this machine.
    expect(worst).toBeLessThan(40);
    expect(decision).toEqual(createPolicy(parsePolicy(POLICY, "test.yaml"), { pins: null }).decide(rpcEvent(LONG)));
  });
});
