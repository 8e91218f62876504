/**
 * Runtime-generated PKI for the upstream test servers.
 *
 * This CA is deliberately distinct from the proxy's own CA: the proxy must
 * trust it (e.g. via `--upstream-ca FILE`) to reach the upstreams, while the
 * clients trust only the proxy's CA. Everything is generated once per test
 * process and cached in memory.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import forge from "node-forge";

export interface TestPki {
  caPem: string;
  caKeyPem: string;
  serverCertPem: string;
  serverKeyPem: string;
}

export interface CertAndKey {
  certPem: string;
  keyPem: string;
}

/** SANs of the normal upstream server certificate. */
export const UPSTREAM_DNS_NAMES = ["localhost", "upstream.test"] as const;
export const UPSTREAM_IP_ADDRESSES = ["127.0.0.1", "::1"] as const;

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

interface KeyPair {
  keyPem: string;
  publicKey: forge.pki.rsa.PublicKey;
  privateKey: forge.pki.rsa.PrivateKey;
}

interface CertificateAuthority {
  cert: forge.pki.Certificate;
  keys: KeyPair;
}

function newKeyPair(): KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
  });
  return {
    keyPem: privateKey,
    publicKey: forge.pki.publicKeyFromPem(publicKey) as forge.pki.rsa.PublicKey,
    privateKey: forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey,
  };
}

function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // keep the serial positive
  return bytes.toString("hex");
}

function subjectFor(commonName: string): forge.pki.CertificateField[] {
  return [
    { name: "commonName", value: commonName },
    { name: "organizationName", value: "mcp-wiretap test upstream" },
  ];
}

function createCa(commonName: string): CertificateAuthority {
  const keys = newKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerial();
  cert.validity.notBefore = new Date(Date.now() - HOUR_MS);
  cert.validity.notAfter = new Date(Date.now() + 30 * DAY_MS);
  cert.setSubject(subjectFor(commonName));
  cert.setIssuer(subjectFor(commonName));
  cert.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { cert, keys };
}

interface IssueOptions {
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  notBefore?: Date;
  notAfter?: Date;
  /** Issuing CA; omitted = the certificate signs itself. */
  issuer?: CertificateAuthority;
  /** Reuse an existing key pair (key generation dominates the cost). */
  keys?: KeyPair;
}

function issueCert(opts: IssueOptions): { cert: forge.pki.Certificate; keys: KeyPair } {
  const keys = opts.keys ?? newKeyPair();
  const dnsNames = opts.dnsNames ?? UPSTREAM_DNS_NAMES;
  const ipAddresses = opts.ipAddresses ?? UPSTREAM_IP_ADDRESSES;
  const commonName = dnsNames[0] ?? ipAddresses[0] ?? "upstream";
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerial();
  cert.validity.notBefore = opts.notBefore ?? new Date(Date.now() - HOUR_MS);
  cert.validity.notAfter = opts.notAfter ?? new Date(Date.now() + 30 * DAY_MS);
  cert.setSubject(subjectFor(commonName));
  cert.setIssuer(opts.issuer ? opts.issuer.cert.subject.attributes : subjectFor(commonName));
  const altNames = [
    ...dnsNames.map((value) => ({ type: 2, value })),
    ...ipAddresses.map((ip) => ({ type: 7, ip })),
  ];
  const extensions: object[] = [
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames },
    { name: "subjectKeyIdentifier" },
  ];
  if (opts.issuer) {
    extensions.push({
      name: "authorityKeyIdentifier",
      keyIdentifier: opts.issuer.cert.generateSubjectKeyIdentifier().getBytes(),
    });
  }
  cert.setExtensions(extensions);
  cert.sign((opts.issuer?.keys ?? keys).privateKey, forge.md.sha256.create());
  return { cert, keys };
}

function toPem(issued: { cert: forge.pki.Certificate; keys: KeyPair }): CertAndKey {
  return { certPem: forge.pki.certificateToPem(issued.cert), keyPem: issued.keys.keyPem };
}

let cachedCa: CertificateAuthority | undefined;
let cachedServer: { cert: forge.pki.Certificate; keys: KeyPair } | undefined;
const cachedVariants = new Map<string, CertAndKey>();

function testCa(): CertificateAuthority {
  cachedCa ??= createCa("mcp-wiretap TEST UPSTREAM CA");
  return cachedCa;
}

function serverIssued(): { cert: forge.pki.Certificate; keys: KeyPair } {
  cachedServer ??= issueCert({ issuer: testCa() });
  return cachedServer;
}

function cachedVariant(name: string, make: () => CertAndKey): CertAndKey {
  let value = cachedVariants.get(name);
  if (!value) {
    value = make();
    cachedVariants.set(name, value);
  }
  return value;
}

/** The test CA and a server cert for localhost, 127.0.0.1, ::1, upstream.test. */
export function testPki(): TestPki {
  const ca = testCa();
  const server = toPem(serverIssued());
  return {
    caPem: forge.pki.certificateToPem(ca.cert),
    caKeyPem: ca.keys.keyPem,
    serverCertPem: server.certPem,
    serverKeyPem: server.keyPem,
  };
}

/** Signed by the test CA, correct names, but notAfter is in the past. */
export function expiredServerCert(): CertAndKey {
  return cachedVariant("expired", () =>
    toPem(
      issueCert({
        issuer: testCa(),
        keys: serverIssued().keys,
        notBefore: new Date(Date.now() - 10 * DAY_MS),
        notAfter: new Date(Date.now() - DAY_MS),
      }),
    ),
  );
}

/** Signed by the test CA and valid, but the only SAN is DNS:other.test. */
export function wrongNameServerCert(): CertAndKey {
  return cachedVariant("wrong-name", () =>
    toPem(
      issueCert({
        issuer: testCa(),
        keys: serverIssued().keys,
        dnsNames: ["other.test"],
        ipAddresses: [],
      }),
    ),
  );
}

/** Correct names and dates, but self-signed (not chained to the test CA). */
export function selfSignedServerCert(): CertAndKey {
  return cachedVariant("self-signed", () => toPem(issueCert({})));
}

let tempDir: string | undefined;

/** Writes `content` to a file called `name` in a per-process temp dir; returns its path. */
export function writeTempFile(content: string | Uint8Array, name: string): string {
  if (!tempDir) {
    const dir = mkdtempSync(join(tmpdir(), "mcp-wiretap-test-"));
    tempDir = dir;
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  const path = join(tempDir, basename(name));
  writeFileSync(path, content);
  return path;
}
