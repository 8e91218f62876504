/** maskAtPointers and the `<redacted>` segment the detector writes for a member name holding a secret. */
import { describe, expect, it } from "vitest";
import { scanAll } from "../../src/detectors/index.js";
import { maskAtPointers, redactBody } from "../../src/log/redact.js";

const TOKEN = ["ghp_", "k3Jx9QvT2mLw8RbN4cYh6ZpD1sFa7GeU5oVi"].join("");
const KEY = ["AKIA", "J5TR8PQ2WX7M4K9B"].join("");

function masked(value: unknown): unknown {
  const masks = scanAll(value, new Set(["secrets"])).map((f) => ({ pointer: f.path, what: f.type }));
  return maskAtPointers(redactBody(value), masks);
}

describe("secret member names", () => {
  it("are renamed in place, in order, and everything beneath them masked by shape", () => {
    const out = masked({ a: 1, [TOKEN]: { note: `see ${KEY}`, [KEY]: "x", plain: "kept" }, z: [KEY] });
    expect(out).toEqual({ a: 1, "[redacted: github_token]": { note: "[redacted: aws_access_key_id]", "[redacted: aws_access_key_id]": "x", plain: "kept" }, z: ["[redacted: aws_access_key_id]"] });
    expect(Object.keys(out as object)).toEqual(["a", "[redacted: github_token]", "z"]);
  });

  it("two names that mask alike are numbered; a name already taken is kept", () => {
    const out = masked({ "[redacted: github_token]": 0, [TOKEN]: 1, [`${TOKEN}x`]: 2 }) as Record<string, unknown>;
    expect(out).toEqual({ "[redacted: github_token]": 0, "[redacted: github_token] #2": 1, "[redacted: github_token] #3": 2 });
  });

  it("a member literally named <redacted> is masked at its pointer as before", () => {
    const out = masked(JSON.parse(`{"<redacted>":"${KEY}","__proto__":"${KEY}"}`));
    expect(JSON.stringify(out)).toBe(`{"<redacted>":"[redacted: aws_access_key_id]","__proto__":"[redacted: aws_access_key_id]"}`);
  });

  it("a deep value beneath a secret name is masked without recursion", () => {
    let deep: unknown[] = [KEY];
    const root = { [TOKEN]: deep };
    for (let i = 0; i < 2_000; i++) deep = (deep[1] = [KEY]) as unknown[];
    const out = masked(root) as Record<string, unknown>;
    let node = out["[redacted: github_token]"] as unknown[];
    let count = 0;
    for (; node !== undefined; node = node[1] as unknown[]) if (node[0] === "[redacted: aws_access_key_id]") count++;
    expect(count).toBe(2_001);
  });
});
