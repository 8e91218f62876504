/**
 * A stream decoder (Go's json.Decoder, Jackson's MappingIterator) reads the values of a line one after another,
 * scalars as well as objects: `1 {…call…}` is a number and then a call to it. The proxy read only objects and
 * arrays in such a sequence, so a call behind a number, a string, `true` or `null` was recorded in monitor mode
 * as an unreadable line alone: `check --forbid-tool` passed though such a receiver ran the call.
 */
import { describe, expect, it } from "vitest";
import { launchTap, type TapMode as Mode } from "../../helpers/stdio-tap-launch.js";

const launch = (mode: Mode) => launchTap(mode);

const DENIED = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_everything","arguments":{}}}`;
const ALLOWED = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`;
const SAMPLING = `{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`;

const LEADS: [string, string][] = [
  ["a number", `1 ${DENIED}`],
  ["a string", `"x"${DENIED}`],
  ["true", `true${DENIED}`],
  ["null", `null ${DENIED}`],
  ["an allowed call, then a number", `${ALLOWED} 1 ${DENIED}`],
  ["an allowed call, then a string", `${ALLOWED}"x"${DENIED}`],
];

describe("stdio: a call behind a scalar on the same line (stream decoders read it)", () => {
  for (const [name, line] of LEADS) {
    it(`${name} before a denied call: monitor mode records the call, enforce mode forwards nothing`, () => {
      const monitor = launch("monitor");
      monitor.tap.fromClient(Buffer.from(`${line}\n`));
      expect(monitor.records.find((r) => r.kind === "request" && r.tool === "delete_everything")).toMatchObject({
        id: 2,
        readability: { reason: expect.stringMatching(/stream of values/) },
        decision: { action: "deny", enforced: false },
      });
      const enforce = launch("enforce");
      enforce.tap.fromClient(Buffer.from(`${line}\n`));
      expect(enforce.server()).toBe("");
      expect(enforce.client()).toContain('"id":2');
    });
  }

  it("a server request behind a number in a server line is recorded in monitor mode", () => {
    const monitor = launch("monitor");
    monitor.tap.fromServer(Buffer.from(`0 ${SAMPLING}\n`));
    expect(monitor.records.find((r) => r.method === "sampling/createMessage")).toMatchObject({ id: 7, decision: { action: "deny", enforced: false } });
  });
});
