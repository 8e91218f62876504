import { it } from "vitest";
import { everythingListings } from "./everything-listings.js";
import { scanAll } from "../../../src/policy/detectors/index.js";
it("print", async () => {
  const l = await everythingListings();
  console.log(JSON.stringify(l).length, (l.tools as any).tools.length, (l.prompts as any).prompts.length, (l.resources as any).resources.length);
  console.log(l.instructions?.slice(0, 3000));
  console.log(JSON.stringify(scanAll(l, new Set(["secrets", "pii", "hiddenText", "poisoning"])), null, 1));
});
