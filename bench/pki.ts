/**
 * A bench-only CA and the upstream's server certificate (RSA keys made natively, certificates built with
 * node-forge). The upstream certificate names localhost and every loopback address the bench listens on.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import forge from "node-forge";

export interface BenchPki {
  caPem: string;
  caFile: string;
  certPem: string;
  keyPem: string;
}

interface Keys {
  pem: string;
  publicKey: forge.pki.PublicKey;
  privateKey: forge.pki.PrivateKey;
}

function rsaKeys(): Keys {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
  });
  return { pem: privateKey, publicKey: forge.pki.publicKeyFromPem(publicKey), privateKey: forge.pki.privateKeyFromPem(privateKey) };
}

function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString("hex");
}

function certificate(subjectCn: string, keys: Keys, extensions: object[], issuer: { cert: forge.pki.Certificate; keys: Keys } | null): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 3_600_000);
  cert.validity.notAfter = new Date(Date.now() + 7 * 86_400_000);
  const subject = [{ name: "commonName", value: subjectCn }, { name: "organizationName", value: "mcp-wiretap bench" }];
  cert.setSubject(subject);
  cert.setIssuer(issuer ? issuer.cert.subject.attributes : subject);
  cert.setExtensions(extensions);
  cert.sign((issuer?.keys ?? keys).privateKey as forge.pki.rsa.PrivateKey, forge.md.sha256.create());
  return cert;
}

/** Creates the PKI and writes the CA certificate to `dir/bench-ca.pem` (for --upstream-ca and friends). */
export function createBenchPki(dir: string, ipAddresses: readonly string[]): BenchPki {
  const caKeys = rsaKeys();
  const caCert = certificate(
    "mcp-wiretap BENCH upstream CA",
    caKeys,
    [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
      { name: "subjectKeyIdentifier" },
    ],
    null,
  );
  const leafKeys = rsaKeys();
  const leaf = certificate(
    "localhost",
    leafKeys,
    [
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: [{ type: 2, value: "localhost" }, ...ipAddresses.map((ip) => ({ type: 7, ip }))] },
      { name: "authorityKeyIdentifier", keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
    ],
    { cert: caCert, keys: caKeys },
  );
  const caPem = forge.pki.certificateToPem(caCert);
  const caFile = path.join(dir, "bench-ca.pem");
  writeFileSync(caFile, caPem, { mode: 0o600 });
  return { caPem, caFile, certPem: forge.pki.certificateToPem(leaf), keyPem: leafKeys.pem };
}
