import { X509Certificate, createPrivateKey } from "node:crypto";
import forge from "node-forge";
import { beforeAll, describe, expect, it } from "vitest";
import { CaError, LeafIssuer, loadOrCreateCa, type CertificateAuthority } from "../../src/ca/index.js";
import { tempDir } from "./temp-dirs.js";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

let ca: CertificateAuthority;
let caCert: X509Certificate;
let leaves: LeafIssuer;

beforeAll(async () => {
  ca = await loadOrCreateCa(await tempDir());
  caCert = new X509Certificate(ca.certPem);
  leaves = await LeafIssuer.create(ca);
});

function leafFor(host: string, issuer = leaves): X509Certificate {
  return new X509Certificate(issuer.certificateFor(host).certPem);
}

describe("LeafIssuer certificates", () => {
  it("are signed by the CA and name the DNS host in the SAN and CN", () => {
    const leaf = leafFor("api.example.com");
    expect(leaf.verify(caCert.publicKey)).toBe(true);
    expect(leaf.checkIssued(caCert)).toBe(true);
    expect(leaf.subjectAltName).toBe("DNS:api.example.com");
    expect(leaf.subject).toBe("CN=api.example.com");
    expect(leaf.issuer).toBe(caCert.subject);
    expect(leaf.checkHost("api.example.com")).toBe("api.example.com");
    expect(leaf.checkHost("other.example.com")).toBeUndefined();
    expect(leaf.ca).toBe(false);
  });

  it("put IPv4 and IPv6 literals in an IP address SAN, with or without brackets", () => {
    const v4 = leafFor("127.0.0.1");
    expect(v4.subjectAltName).toBe("IP Address:127.0.0.1");
    expect(v4.checkIP("127.0.0.1")).toBe("127.0.0.1");

    for (const host of ["::1", "[::1]"]) {
      const v6 = leafFor(host);
      expect(v6.subjectAltName).toBe("IP Address:0:0:0:0:0:0:0:1");
      expect(v6.checkIP("::1")).toBe("::1");
    }
    const mapped = leafFor("[2001:db8::ffff:192.0.2.1]");
    expect(mapped.checkIP("2001:db8::ffff:c000:201")).toBe("2001:db8::ffff:c000:201");
  });

  it("keep the full name in the SAN but cut the CN to 64 characters", () => {
    const host = `${"a".repeat(60)}.${"b".repeat(60)}.example.com`;
    const leaf = leafFor(host);
    expect(leaf.subjectAltName).toBe(`DNS:${host}`);
    expect(leaf.subject).toBe(`CN=${host.slice(0, 64)}`);
    expect(leaf.checkHost(host)).toBe(host);
  });

  it("carry serverAuth, digitalSignature + keyEncipherment, CA:false and the CA's key identifier", () => {
    const cert = forge.pki.certificateFromPem(leaves.certificateFor("ext.example.com").certPem);
    const caForge = forge.pki.certificateFromPem(ca.certPem);
    expect(cert.siginfo.algorithmOid).toBe(forge.pki.oids["sha256WithRSAEncryption"]);
    expect(cert.getExtension("basicConstraints")).toMatchObject({ cA: false });
    expect(cert.getExtension("keyUsage")).toMatchObject({
      digitalSignature: true,
      keyEncipherment: true,
      keyCertSign: false,
    });
    expect(cert.getExtension("extKeyUsage")).toMatchObject({ serverAuth: true });
    expect(new X509Certificate(leaves.certificateFor("ext.example.com").certPem).keyUsage).toEqual([
      "1.3.6.1.5.5.7.3.1",
    ]);
    const aki = cert.getExtension("authorityKeyIdentifier") as { value: string };
    const ski = (caForge.getExtension("subjectKeyIdentifier") as { subjectKeyIdentifier: string }).subjectKeyIdentifier;
    // value: SEQUENCE { [0] keyIdentifier } = 30 16 80 14 <20 bytes>
    expect(forge.util.bytesToHex(aki.value)).toBe(`30168014${ski}`);
  });

  it("start an hour back and last at most 397 days", () => {
    const before = Date.now();
    const issued = leaves.certificateFor("validity.example.com");
    const leaf = new X509Certificate(issued.certPem);
    const notBefore = leaf.validFromDate.getTime();
    const notAfter = leaf.validToDate.getTime();
    expect(notBefore).toBeLessThanOrEqual(before - HOUR);
    expect(notBefore).toBeGreaterThan(before - HOUR - 5_000);
    expect(notAfter - notBefore).toBeLessThanOrEqual(397 * DAY);
    expect(issued.notAfter).toBe(notAfter);
    expect(issued.notBefore).toBe(notBefore);
  });

  it("have distinct positive 16-byte serials", () => {
    const serials = new Set<string>();
    for (let i = 0; i < 20; i++) serials.add(leafFor(`serial-${i}.example.com`).serialNumber);
    expect(serials.size).toBe(20);
    for (const serial of serials) {
      expect(serial).toMatch(/^[0-9A-F]{32}$/);
      expect(parseInt(serial[0]!, 16)).toBeLessThan(8); // top bit clear
    }
  });

  it("share one process key: 50 new hosts give 50 distinct certificates with the same public key", () => {
    const pems = new Set<string>();
    const publicKeys = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const { certPem } = leaves.certificateFor(`host-${i}.shared-key.test`);
      pems.add(certPem);
      publicKeys.add(new X509Certificate(certPem).publicKey.export({ type: "spki", format: "pem" }).toString());
    }
    expect(pems.size).toBe(50);
    expect(publicKeys.size).toBe(1);
    expect(new X509Certificate([...pems][0]!).checkPrivateKey(createPrivateKey(leaves.keyPem))).toBe(true);
  });

  it("are cached per host, case-insensitively", () => {
    const a = leaves.certificateFor("cache.example.com");
    expect(leaves.certificateFor("cache.example.com")).toBe(a);
    expect(leaves.certificateFor("CACHE.Example.com")).toBe(a);
    expect(leaves.secureContextFor("cache.example.com")).toBe(leaves.secureContextFor("cache.example.com"));
  });

  it("refuse what is not a host name or IP literal", () => {
    for (const host of ["", "exa mple.com", "-bad.example.com", "a..b", "*.example.com", "x".repeat(254)]) {
      expect(() => leaves.certificateFor(host), host).toThrow(CaError);
    }
  });
});

describe("LeafIssuer cache and renewal", () => {
  it("re-issues a certificate within 7 days of its expiry", async () => {
    let now = Date.now();
    const issuer = await LeafIssuer.create(ca, { now: () => now });
    const first = issuer.certificateFor("renew.example.com");
    const firstContext = issuer.secureContextFor("renew.example.com");

    now = first.notAfter - 8 * DAY;
    expect(issuer.certificateFor("renew.example.com")).toBe(first);

    now = first.notAfter - 6 * DAY;
    const renewed = issuer.certificateFor("renew.example.com");
    expect(renewed).not.toBe(first);
    expect(renewed.notAfter).toBeGreaterThan(first.notAfter);
    expect(new X509Certificate(renewed.certPem).serialNumber).not.toBe(new X509Certificate(first.certPem).serialNumber);
    expect(issuer.secureContextFor("renew.example.com")).not.toBe(firstContext);
  });

  it("keeps at most cacheSize hosts, dropping the least recently used", async () => {
    const issuer = await LeafIssuer.create(ca, { cacheSize: 3 });
    const a = issuer.certificateFor("a.test");
    const b = issuer.certificateFor("b.test");
    issuer.certificateFor("c.test");
    expect(issuer.size).toBe(3); // "localhost" from the warm-up was evicted
    issuer.certificateFor("a.test");
    issuer.certificateFor("d.test");
    expect(issuer.size).toBe(3);
    expect(issuer.certificateFor("a.test")).toBe(a);
    expect(issuer.certificateFor("b.test")).not.toBe(b);
  });

  it("stops at the CA's own expiry and refuses once the CA has expired", async () => {
    let now = ca.notAfter - 30 * DAY;
    const issuer = await LeafIssuer.create(ca, { now: () => now });
    const capped = issuer.certificateFor("late.example.com");
    expect(capped.notAfter).toBe(ca.notAfter);
    now = ca.notAfter - DAY;
    expect(issuer.certificateFor("late.example.com")).toBe(capped);
    now = ca.notAfter;
    expect(() => issuer.certificateFor("late.example.com")).toThrow(CaError);
    await expect(LeafIssuer.create(ca, { now: () => now })).rejects.toThrow(/expired on/);
  });
});
