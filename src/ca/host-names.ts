import net from "node:net";
import { domainToASCII } from "node:url";
import { CaError } from "./errors.js";

/** What a leaf certificate is issued for: a DNS name or an IP address (which goes in an iPAddress SAN). */
export type CertificateSubject =
  | { readonly kind: "dns"; readonly name: string; readonly cacheKey: string }
  | { readonly kind: "ip"; readonly address: string; readonly bytes: Buffer; readonly cacheKey: string };

const MAX_DNS_NAME = 253;
// Letters, digits, hyphen and underscore (seen in real internal names); no wildcards.
const ASCII_OUTSIDE_NAMES = /[^\w.\-\u0080-\uFFFF]/;
const DNS_NAME = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*$/;

/**
 * Turns the host a client asked for (SNI, CONNECT target, Host header) into a certificate subject.
 * IPv6 literals are accepted with or without brackets; a zone id ("%eth0") is dropped because a
 * certificate cannot carry one. DNS names are lower-cased and converted to punycode.
 */
export function parseHost(host: string): CertificateSubject {
  let literal = host.trim();
  if (literal.startsWith("[") && literal.endsWith("]")) literal = literal.slice(1, -1);
  if (net.isIPv4(literal)) {
    const bytes = Buffer.from(literal.split(".").map(Number));
    return { kind: "ip", address: literal, bytes, cacheKey: `ip:${bytes.toString("hex")}` };
  }
  const zone = literal.indexOf("%");
  const withoutZone = zone >= 0 ? literal.slice(0, zone) : literal;
  if (net.isIPv6(withoutZone)) {
    const bytes = ipv6ToBytes(withoutZone);
    return { kind: "ip", address: withoutZone, bytes, cacheKey: `ip:${bytes.toString("hex")}` };
  }

  // domainToASCII parses like a URL host ("a/b" gives "a"), so other ASCII punctuation is refused first.
  let name = ASCII_OUTSIDE_NAMES.test(literal) ? "" : domainToASCII(literal.toLowerCase());
  if (name.endsWith(".")) name = name.slice(0, -1);
  if (name === "" || name.length > MAX_DNS_NAME || !DNS_NAME.test(name)) {
    throw new CaError(`Cannot issue a certificate for ${JSON.stringify(host)}: not a valid host name or IP address.`);
  }
  return { kind: "dns", name, cacheKey: `dns:${name}` };
}

/** 16 bytes of an IPv6 address already checked by net.isIPv6 (so "::" appears at most once). */
export function ipv6ToBytes(address: string): Buffer {
  let text = address;
  const bytes = Buffer.alloc(16);
  let tail: number[] = [];

  // An embedded IPv4 suffix (::ffff:1.2.3.4) stands for the last two groups.
  const lastColon = text.lastIndexOf(":");
  const suffix = text.slice(lastColon + 1);
  if (suffix.includes(".")) {
    const [a = 0, b = 0, c = 0, d = 0] = suffix.split(".").map(Number);
    tail = [(a << 8) | b, (c << 8) | d];
    text = text.slice(0, lastColon + 1) + "0:0";
  }

  const [head = "", rest] = text.split("::");
  const groupsOf = (part: string): number[] => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  let groups: number[];
  if (rest === undefined) {
    groups = groupsOf(head);
  } else {
    const left = groupsOf(head);
    const right = groupsOf(rest);
    groups = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  }
  if (tail.length > 0) groups.splice(6, 2, ...tail);
  groups.forEach((group, i) => bytes.writeUInt16BE(group, i * 2));
  return bytes;
}

/** The Common Name is limited to 64 characters (RFC 5280 ub-common-name); the SAN keeps the full name. */
export function commonNameFor(subject: CertificateSubject): string {
  const full = subject.kind === "dns" ? subject.name : subject.address;
  return full.slice(0, 64);
}
