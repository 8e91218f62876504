import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CaError, parseHost } from "../../src/ca/index.js";
import { ipv6ToBytes } from "../../src/ca/host-names.js";

describe("parseHost", () => {
  it("reads DNS names, lower-cased, punycoded, without a trailing dot", () => {
    expect(parseHost("API.Example.com.")).toMatchObject({ kind: "dns", name: "api.example.com" });
    expect(parseHost("bücher.example")).toMatchObject({ kind: "dns", name: "xn--bcher-kva.example" });
    expect(parseHost("my_host.internal")).toMatchObject({ kind: "dns", name: "my_host.internal" });
    expect(parseHost("localhost")).toMatchObject({ kind: "dns", name: "localhost" });
  });

  it("reads IPv4 and IPv6 literals, bracketed or not, dropping a zone id", () => {
    expect(parseHost("10.1.2.3")).toMatchObject({ kind: "ip", address: "10.1.2.3", bytes: Buffer.from([10, 1, 2, 3]) });
    const loopback = Buffer.alloc(16);
    loopback[15] = 1;
    expect(parseHost("::1")).toMatchObject({ kind: "ip", address: "::1", bytes: loopback });
    expect(parseHost("[::1]")).toMatchObject({ kind: "ip", address: "::1", bytes: loopback });
    expect(parseHost("fe80::1%eth0")).toMatchObject({ kind: "ip", address: "fe80::1" });
  });

  it("gives spellings of the same address the same cache key", () => {
    expect(parseHost("0:0::1").cacheKey).toBe(parseHost("[::1]").cacheKey);
    expect(parseHost("::ffff:127.0.0.1").cacheKey).toBe(parseHost("::ffff:7f00:1").cacheKey);
    expect(parseHost("Example.COM").cacheKey).toBe(parseHost("example.com").cacheKey);
  });

  it("rejects what cannot be a host", () => {
    const notHosts = ["", "[]", "a b", "a/b", "1.2.3.4%eth0", "foo..bar", "-x.example", "x-.example", "1.2.3.4:443"];
    for (const host of notHosts) expect(() => parseHost(host), host).toThrow(CaError);
  });
});

describe("ipv6ToBytes", () => {
  // Expand the 16 bytes to eight full groups; URL parsing then canonicalises both spellings the same way.
  const canonical = (address: string): string => new URL(`http://[${address}]/`).hostname;
  const spelled = (bytes: Buffer): string =>
    Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16)).join(":");

  it("agrees with the WHATWG URL parser on every IPv6 spelling", () => {
    fc.assert(
      fc.property(fc.ipV6(), (address) => {
        const bytes = ipv6ToBytes(address);
        expect(bytes).toHaveLength(16);
        expect(canonical(spelled(bytes))).toBe(canonical(address));
      }),
      { numRuns: 500 },
    );
  });
});
