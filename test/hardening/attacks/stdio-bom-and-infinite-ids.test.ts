/**
 * Two readings the stdio relay missed:
 * - a line cut at a CR whose second piece starts with a byte order mark (U+FEFF): a Java server that reads
 *   lines with readLine and parses each with Gson (its JsonReader skips a leading BOM, as the proxy does at the
 *   start of a line) runs the call behind it; monitor mode recorded only the call before the CR;
 * - an id past the range of a double (`1e400`): JavaScript reads it as Infinity (so `1e400` and `2e400` are one
 *   id to it), exact readers as written. Ids past 2^53 and fractional ids were refused in enforce mode; this
 *   one was forwarded.
 */
import { describe, expect, it } from "vitest";
import { launchTap, type TapMode as Mode } from "../../helpers/stdio-tap-launch.js";

const launch = (mode: Mode) => launchTap(mode);

const call = (id: string, name: string): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":{}}}`;

describe("stdio: a byte order mark after a CR", () => {
  const line = Buffer.from(`${call("1", "echo")}\r\ufeff${call("2", "delete_everything")}\n`);

  it("monitor mode records the call behind it, with the reading that reads it", () => {
    const monitor = launch("monitor");
    monitor.tap.fromClient(line);
    expect(monitor.server()).toBe(line.toString());
    expect(monitor.records.find((r) => r.kind === "request" && r.tool === "delete_everything")).toMatchObject({
      id: 2,
      readability: { reason: expect.stringMatching(/CR/) },
      decision: { action: "deny", enforced: false },
    });
  });

  it("enforce mode forwards nothing of the line", () => {
    const enforce = launch("enforce");
    enforce.tap.fromClient(line);
    expect(enforce.server()).toBe("");
    expect(enforce.records.find((r) => r.tool === "delete_everything")).toMatchObject({ decision: { action: "deny", enforced: true } });
  });
});

describe("stdio: an id JavaScript reads as Infinity", () => {
  for (const id of ["1e400", "-1e400"]) {
    it(`${id}: refused in enforce mode, recorded with the doubt in monitor mode`, () => {
      const line = Buffer.from(`${call(id, "echo")}\n`);
      const enforce = launch("enforce");
      enforce.tap.fromClient(line);
      expect(enforce.server()).toBe("");
      expect(enforce.client()).toContain("-32052");
      const monitor = launch("monitor");
      monitor.tap.fromClient(line);
      expect(monitor.records.find((r) => r.tool === "echo")).toMatchObject({ readability: { reason: expect.stringMatching(/JavaScript/) } });
    });
  }
});
