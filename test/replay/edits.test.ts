import { describe, expect, it } from "vitest";
import { applyEdits, parseSet } from "../../src/replay/edits.js";
import { parseHeaders } from "../../src/replay/replay-inputs.js";

describe("--set path=JSON", () => {
  it("sets a value at a path, creating objects on the way and indexing arrays, without touching the capture", () => {
    const captured = { name: "echo", arguments: { message: "hello", list: [1, 2] } };
    const edited = applyEdits(captured, [parseSet('arguments.message="hi"'), parseSet("arguments.list.1=20"), parseSet("arguments.extra.deep=true")]);
    expect(edited).toEqual({ name: "echo", arguments: { message: "hi", list: [1, 20], extra: { deep: true } } });
    expect(captured.arguments.message).toBe("hello");
  });

  it("a value that is not JSON says how to quote it; a path into the prototype or through a scalar is refused", () => {
    expect(() => parseSet("arguments.message=hi")).toThrow(/--set arguments.message='"hi"'/);
    expect(() => parseSet("__proto__.polluted=1")).toThrow(/bad path/);
    expect(() => parseSet("arguments.constructor.prototype=1")).toThrow(/bad path/);
    expect(() => applyEdits({ name: "x" }, [parseSet("name.inner=1")])).toThrow(/name is "x", not an object/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("--header", () => {
  it("takes Name: value; refuses the headers the replay sets itself and values with line breaks, never quoting the value", () => {
    expect(parseHeaders(["Authorization: Bearer abc", "X-Key:v"])).toEqual({ Authorization: "Bearer abc", "X-Key": "v" });
    expect(() => parseHeaders(["Mcp-Session-Id: s"])).toThrow(/sets this header itself/);
    expect(() => parseHeaders(["X-Key: secret\r\nInjected: 1"])).toThrow(/line break/);
    expect(() => parseHeaders(["no colon secret-value"])).toThrow(/expected 'Name: value'/);
    expect(() => parseHeaders(["X-Key: secret-value\rmore"])).toThrow(expect.objectContaining({ message: expect.not.stringContaining("secret-value") }));
  });
});
