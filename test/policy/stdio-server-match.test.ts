/** A rule names a stdio server as its records do: `stdio:LABEL`, whole, or a glob over it. */
import { describe, expect, it } from "vitest";
import { firing, policyFrom, rpcEvent } from "./policy-fixtures.js";

const CALL = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: {} } };

describe("policy: stdio servers", () => {
  const policy = policyFrom(`
rules:
  - { name: exact, action: flag, match: { server: "stdio:everything" } }
  - { name: glob, action: flag, match: { server: "stdio:every*" } }
  - { name: any-stdio, action: flag, match: { server: "stdio:*" } }
  - { name: regex, action: flag, match: { server: "re:^stdio:every" } }
`);

  it("matches stdio:LABEL exactly, by glob and by regular expression", () => {
    expect(firing(policy.judge(rpcEvent(CALL, { server: "stdio:everything" })))).toEqual(["exact", "glob", "any-stdio", "regex"]);
  });

  it("does not match another label, nor an HTTP server", () => {
    expect(firing(policy.judge(rpcEvent(CALL, { server: "stdio:filesystem" })))).toEqual(["any-stdio"]);
    expect(firing(policy.judge(rpcEvent(CALL, { server: "everything:443" })))).toEqual([]);
  });
});
