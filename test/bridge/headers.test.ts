/** The bridge's headers: from the command line, with ${VAR} from the environment, or named by --header-env. */
import { describe, expect, it } from "vitest";
import { headersFromEnv, parseHeaders } from "../../src/bridge/run-bridge.js";

describe("bridge headers", () => {
  it("Name: value, ${VAR} expanded from the environment", () => {
    expect(parseHeaders(["Authorization: Bearer ${TOKEN}", "X-Team:  blue "], { TOKEN: "t0k" })).toEqual({ authorization: "Bearer t0k", "x-team": "blue" });
  });

  it("--header-env takes the value as it is, ${…} included", () => {
    expect(headersFromEnv(["Authorization=MCP_WIRETAP_HEADER_1"], { MCP_WIRETAP_HEADER_1: "Bearer ${not-expanded}" })).toEqual({ authorization: "Bearer ${not-expanded}" });
  });

  it("refused with a clear error: no name, a variable not set, a control character (header injection)", () => {
    expect(() => parseHeaders(["no colon"], {})).toThrow(/give "Name: value"/);
    expect(() => parseHeaders(["A: ${MISSING}"], {})).toThrow(/MISSING\} is not set/);
    expect(() => parseHeaders(["A: ${V}"], { V: "x\r\nInjected: 1" })).toThrow(/control character/);
    expect(() => headersFromEnv(["A=V"], { V: "x\nB: 1" })).toThrow(/control character/);
    expect(() => headersFromEnv(["A"], {})).toThrow(/Name=VARIABLE/);
  });
});
