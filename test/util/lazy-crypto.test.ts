/** The session id a `stdio` launch makes without node:crypto: a version 4 UUID as crypto.randomUUID() makes one. */
import { describe, expect, it } from "vitest";
import { randomUuid } from "../../src/util/lazy-crypto.js";

describe("randomUuid", () => {
  it("gives version 4, variant 1 UUIDs, all different", () => {
    const ids = Array.from({ length: 2000 }, () => randomUuid());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Random bits, not a counter: every hex digit of the random positions turns up.
    expect(new Set(ids.map((id) => id[0])).size).toBe(16);
  });
});
