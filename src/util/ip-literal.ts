import { isIPv4 } from "node:net";

/**
 * How the proxy reads an IP literal: the address it routes to, in one spelling. `host` is what policy,
 * records and the connection use; `leafHost` is the spelling a TLS client checks the proxy's leaf against.
 */
export type IpLiteralReading = { ok: true; host: string; leafHost: string } | { ok: false; reason: string };

const UNSPECIFIED_REASON = "the unspecified address (0.0.0.0/8, ::) is no destination: the OS connects it to this host";

/** An IPv4 literal net.isIPv4 accepted (dotted decimal, no leading zeros). */
export function readIpv4(address: string): IpLiteralReading {
  // 0.0.0.0 reaches this host's listeners on Linux: a rule on 127.0.0.1 would not see it. 0/8 is "this network".
  if (address.startsWith("0.")) return { ok: false, reason: UNSPECIFIED_REASON };
  return { ok: true, host: address, leafHost: address };
}

/**
 * An IPv6 literal net.isIPv6 accepted, lower-case, without brackets. Many texts name one address
 * (0:0:0:0:0:0:0:1, ::0001, ::1): it is read in the one WHATWG URL serialisation (RFC 5952's compressed
 * form). An IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d) address goes out as IPv4 to the
 * address it holds, so it is read as that IPv4 address: a rule on 127.0.0.1 must see [::ffff:127.0.0.1].
 */
export function readIpv6(literal: string): IpLiteralReading {
  // `::1%lo` reaches ::1 (the zone only picks an interface): one more spelling a rule on ::1 would not see.
  if (literal.includes("%")) return { ok: false, reason: "an IPv6 zone id (%eth0) is not accepted in a destination" };
  let canonical: string;
  try {
    canonical = new URL(`http://[${literal}]/`).hostname.slice(1, -1);
  } catch {
    return { ok: false, reason: "invalid IPv6 literal" };
  }
  const groups = expandGroups(canonical);
  const leadingZeros = groups.findIndex((g) => g !== 0);
  const mapped = leadingZeros === 5 && groups[5] === 0xffff;
  // ::/96 holds the IPv4-compatible addresses, except :: itself and ::1 (loopback).
  const compatible = leadingZeros >= 6 && !(leadingZeros === 7 && groups[7] === 1);
  if (leadingZeros === -1) return { ok: false, reason: UNSPECIFIED_REASON };
  if (mapped || compatible) {
    const ipv4 = [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".");
    if (!isIPv4(ipv4)) return { ok: false, reason: "invalid IPv4-mapped literal" };
    const read = readIpv4(ipv4);
    return read.ok ? { ok: true, host: read.host, leafHost: canonical } : read;
  }
  return { ok: true, host: canonical, leafHost: canonical };
}

/** The eight 16-bit groups of a serialisation with no embedded IPv4 part. */
function expandGroups(canonical: string): number[] {
  const [head = "", tail] = canonical.split("::");
  const parse = (part: string): number[] => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}
