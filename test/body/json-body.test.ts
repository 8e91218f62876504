import { describe, expect, it } from "vitest";
import { collectBody, maxDepth, parseJsonBody, parseJsonText } from "../../src/body/json-body.js";

const bytes = (text: string) => Buffer.from(text, "utf8");

describe("parseJsonBody", () => {
  it("parses a JSON-RPC object", () => {
    const params = { name: "météo", arguments: { ville: "Zürich" } };
    const request = { jsonrpc: "2.0", id: "a-1", method: "tools/call", params };
    expect(parseJsonBody(bytes(JSON.stringify(request)))).toEqual({ ok: true, value: request });
  });

  it("parses a batch array", () => {
    const batch = [
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
    ];
    expect(parseJsonBody(bytes(JSON.stringify(batch)))).toEqual({ ok: true, value: batch });
  });

  it("accepts a UTF-8 BOM before the JSON", () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes("[1]")]);
    expect(parseJsonBody(withBom)).toEqual({ ok: true, value: [1] });
  });

  it("reports invalid JSON with its position, without quoting the body (it may hold secrets)", () => {
    const result = parseJsonBody(bytes('{"access_token": hunter2}'));
    expect(result).toEqual({ ok: false, code: "invalid_json", error: expect.stringMatching(/^invalid JSON: /) });
    if (!result.ok) expect(result.error).not.toContain("hunter2");
    const positioned = parseJsonBody(bytes('{"id": 1} trailing'));
    expect(positioned).toMatchObject({ code: "invalid_json", error: expect.stringContaining("position 10") });
    if (!positioned.ok) expect(positioned.error).not.toContain("trailing");
  });

  it("reports invalid UTF-8 instead of parsing replacement characters", () => {
    const body = Buffer.concat([bytes('{"name": "'), Buffer.from([0xc3, 0x28]), bytes('"}')]);
    expect(parseJsonBody(body)).toEqual({
      ok: false,
      code: "invalid_utf8",
      error: `JSON body is not valid UTF-8 (${body.length} bytes)`,
    });
  });

  it("reports an empty (or blank) body", () => {
    for (const body of ["", "  \r\n"]) {
      expect(parseJsonBody(bytes(body))).toEqual({
        ok: false,
        code: "empty_body",
        error: "empty body: no JSON to parse",
      });
    }
  });

  it("reports a truncated body without trying to parse the prefix", () => {
    const prefix = bytes('{"jsonrpc":"2.0","id":1,"result":{"content":[');
    expect(parseJsonBody(prefix, { truncated: true, limit: 45 })).toEqual({
      ok: false,
      code: "body_truncated",
      error: "JSON body is larger than the inspection limit of 45 bytes; not parsed",
    });
  });

  it("parses 100,000 levels of nesting without overflowing the stack", () => {
    const depth = 100_000;
    const result = parseJsonBody(bytes("[".repeat(depth) + "]".repeat(depth)));
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(maxDepth(result.value, 1_000_000)).toBe(depth);
      expect(maxDepth(result.value, 64)).toBe(65);
    }
    const objects = parseJsonText('{"a":'.repeat(depth) + "null" + "}".repeat(depth));
    expect(objects.ok && maxDepth(objects.value, 256)).toBe(257);
  });
});

describe("maxDepth", () => {
  it("counts containers, not scalars", () => {
    expect(maxDepth("text", 10)).toBe(0);
    expect(maxDepth(null, 10)).toBe(0);
    expect(maxDepth([], 10)).toBe(1);
    expect(maxDepth({ a: [1, { b: [] }], c: 2 }, 10)).toBe(4);
    expect(maxDepth([[1], [[2]], 3], 10)).toBe(3);
  });

  it("stops at limit + 1, even on a cyclic value", () => {
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    expect(maxDepth(cyclic, 50)).toBe(51);
    expect(maxDepth([[[]]], 2)).toBe(3);
    expect(maxDepth([[[]]], 3)).toBe(3);
  });
});

describe("collectBody", () => {
  it("keeps everything below the limit", () => {
    const collector = collectBody(100);
    collector.data(bytes("hello "));
    collector.data(bytes("world"));
    collector.end();
    expect(collector.body().toString()).toBe("hello world");
    expect(collector).toMatchObject({ totalBytes: 11, truncated: false, ended: true, aborted: false });
  });

  it("keeps exactly `limit` bytes, counts the rest and notes the truncation", () => {
    const collector = collectBody(8);
    collector.data(bytes("12345"));
    collector.data(bytes("67890"));
    collector.data(bytes("abc"));
    expect(collector.body().toString()).toBe("12345678");
    expect(collector).toMatchObject({ totalBytes: 13, truncated: true });
  });

  it("copies a partial chunk so a huge chunk is not kept alive", () => {
    const huge = Buffer.alloc(1024 * 1024, 0x61);
    const collector = collectBody(4);
    collector.data(huge);
    expect(collector.body().toString()).toBe("aaaa");
    expect(collector.body().buffer.byteLength).toBeLessThan(huge.length);
  });

  it("ignores data after end or abort", () => {
    const collector = collectBody(10);
    collector.data(bytes("ab"));
    collector.abort?.({ code: "client_aborted", message: "gone" });
    collector.data(bytes("cd"));
    expect(collector).toMatchObject({ totalBytes: 2, aborted: true });
  });
});
