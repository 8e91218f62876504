/** The credentials of a body, kept for the exchange's later records: only the credentials, never the body. */
import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { bodyCredentials } from "../../../src/mcp/auth/body-credentials.js";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
const form = { "content-type": "application/x-www-form-urlencoded" };

describe("body credentials", () => {
  it("every spelling of a form's and a JSON body's credentials, from 6 characters", () => {
    const found = bodyCredentials({ text: "grant_type=refresh_token&refresh_token=RT%2Fab+cd&code=12345&state=visible-state", truncated: false, problem: null }, form);
    expect(new Set(found)).toEqual(new Set(["RT/ab cd", "RT%2Fab+cd", "RT%2Fab%20cd"]));
    const json = bodyCredentials({ text: JSON.stringify({ grant_type: "x", code: "c0de-value", nested: { password: "pw-value" } }), truncated: false, problem: null }, { "content-type": "application/json" });
    expect(new Set(json)).toEqual(new Set(["c0de-value", "pw-value"]));
  });

  it("keeps none of the body alive (a value cut from the body's text was a view of all 64 KiB of it)", () => {
    const kept: string[][] = [];
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 200; i++) {
      const text = JSON.parse(JSON.stringify(`code=abcdefghijklmnopqrstuvwxyz%2F0123456789-${i}&pad=${"x".repeat(65_000)}`)) as string;
      kept.push(bodyCredentials({ text, truncated: false, problem: null }, form));
    }
    gc();
    expect(kept.every((values) => values.length > 0)).toBe(true);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(4 * 1024 * 1024); // 13 MB of bodies went by
  });
});
