/**
 * Compiled schema validators live as long as the catalog holds their tool (issue 33: "not keeping compiled
 * validators for evicted tools"). The compiler's cache kept the last 500 validators, each holding its whole
 * schema, whatever the catalog had let go: a server listing tools with 1 MiB schemas, each called once,
 * left up to 500 MiB held beyond the catalog's bound.
 */
import { describe, expect, it } from "vitest";
import { ToolCatalog } from "../../src/policy/tool-catalog.js";
import { MiB, retainedBy } from "../helpers/retained-memory.js";

const SERVER = "hostile.test:443";
const fresh = (chars: number, seed: number): string => `${seed}-${Buffer.alloc(chars, `${seed % 10}abcdefgh`).toString("latin1")}`;

describe("compiled validators of evicted tools", () => {
  it("20 tools with 1 MiB schemas, each listed and called in turn: only what the catalog holds stays", async () => {
    const catalog = new ToolCatalog();
    const retained = await retainedBy(async () => {
      for (let i = 0; i < 20; i++) {
        const schema = { type: "object", properties: { n: { type: "number", description: fresh(MiB, i) } }, required: ["n"] };
        catalog.learn(SERVER, [{ name: `t${i}`, definition: { name: `t${i}`, inputSchema: schema } }]);
        expect(catalog.check(SERVER, `t${i}`, { n: "x" })).toEqual([expect.objectContaining({ instancePath: "/n" })]);
      }
      // A weak reference holds its target until the task that made it ends.
      await new Promise((resolve) => setTimeout(resolve, 0));
    });
    // The catalog holds a server's 4 MiB share (one of these schemas, counted twice); all 20 were kept before.
    expect(catalog.usage.bytes).toBeLessThanOrEqual(4 * MiB);
    expect(retained).toBeLessThan(10 * MiB);
    // The latest is still checked (its validator compiled again if it was collected).
    expect(catalog.check(SERVER, "t19", { n: 1 })).toEqual([]);
  });
});
