/**
 * X.509 building blocks: node-forge lays out the certificate structure (TBSCertificate), node:crypto
 * signs it. forge's own `cert.sign` is pure-JS RSA (30-60 ms per signature, blocking the event loop);
 * the native signature takes about a millisecond. All forge-specific code of the CA lives here.
 */
import { createHash, randomBytes, sign, type KeyObject, type X509Certificate } from "node:crypto";
import forge from "node-forge";
import { commonNameFor, type CertificateSubject } from "./host-names.js";

const { asn1 } = forge;
type Asn1 = forge.asn1.Asn1;

const SHA256_WITH_RSA = forge.pki.oids["sha256WithRSAEncryption"] as string;

// Exported by node-forge at runtime but missing from @types/node-forge.
const getTBSCertificate = (forge.pki as unknown as { getTBSCertificate(cert: forge.pki.Certificate): Asn1 })
  .getTBSCertificate;

/** A forge RSA public key, ready to be put in a SubjectPublicKeyInfo. */
export type CertificatePublicKey = forge.pki.PublicKey;

/** What signing a certificate on behalf of a CA takes. */
export interface IssuerIdentity {
  readonly privateKey: KeyObject;
  /** The CA's subject Name exactly as encoded in its certificate: becomes the issuer of what it signs. */
  readonly name: Asn1;
  /** The CA's subjectKeyIdentifier: becomes the authorityKeyIdentifier of what it signs. */
  readonly keyIdentifier: Buffer;
}

export interface CaCertificateOptions {
  readonly commonName: string;
  readonly organization: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly publicKeyPem: string;
  readonly privateKey: KeyObject;
}

export interface LeafCertificateOptions {
  readonly subject: CertificateSubject;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly publicKey: CertificatePublicKey;
}

export function importPublicKey(spkiPem: string): CertificatePublicKey {
  return forge.pki.publicKeyFromPem(spkiPem);
}

/**
 * A random 128-bit serial. The top bit is cleared so the DER INTEGER is positive, and the next one is set
 * so it is never a shorter, zero-led number (DER wants minimal encodings): always 16 bytes, 126 random bits.
 */
export function randomSerial(): Buffer {
  const serial = randomBytes(16);
  serial[0] = 0x40 | (serial[0]! & 0x3f);
  return serial;
}

export function derToPem(der: Buffer, label = "CERTIFICATE"): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/** A self-signed CA certificate (PEM) that may sign end-entity certificates only (pathLen 0). */
export function createCaCertificate(options: CaCertificateOptions): string {
  const subject = [
    utf8Attribute("CN", options.commonName.slice(0, 64)),
    utf8Attribute("O", options.organization),
  ];
  const name = forge.pki.distinguishedNameToAsn1({ attributes: subject });
  const der = signCertificate(
    {
      subject,
      notBefore: options.notBefore,
      notAfter: options.notAfter,
      publicKey: importPublicKey(options.publicKeyPem),
      extensions: [
        { name: "basicConstraints", critical: true, cA: true, pathLenConstraint: 0 },
        { name: "keyUsage", critical: true, keyCertSign: true, cRLSign: true },
        { name: "subjectKeyIdentifier" },
      ],
    },
    { privateKey: options.privateKey, name },
  );
  return derToPem(der);
}

/** A TLS server certificate (DER) for one host, signed by `issuer`. */
export function createLeafCertificate(options: LeafCertificateOptions, issuer: IssuerIdentity): Buffer {
  const { subject } = options;
  const altName =
    subject.kind === "dns"
      ? { type: 2, value: subject.name }
      : { type: 7, value: subject.bytes.toString("binary") };
  return signCertificate(
    {
      subject: [utf8Attribute("CN", commonNameFor(subject))],
      notBefore: options.notBefore,
      notAfter: options.notAfter,
      publicKey: options.publicKey,
      extensions: [
        { name: "basicConstraints", critical: true, cA: false },
        { name: "keyUsage", critical: true, digitalSignature: true, keyEncipherment: true },
        { name: "extKeyUsage", serverAuth: true },
        { name: "subjectAltName", altNames: [altName] },
        { name: "authorityKeyIdentifier", keyIdentifier: issuer.keyIdentifier.toString("binary") },
      ],
    },
    issuer,
  );
}

/**
 * The parts of a loaded CA certificate needed to sign with it. The issuer Name is copied as encoded
 * (not re-encoded from parsed fields) so it matches the CA's subject byte for byte.
 */
export function issuerIdentity(caCert: X509Certificate, privateKey: KeyObject): IssuerIdentity {
  const certificate = asn1.fromDer(caCert.raw.toString("binary"));
  const tbs = certificate.value[0] as Asn1;
  const fields = tbs.value as Asn1[];
  // TBSCertificate: [0] version (explicit, optional), serial, signature, issuer, validity, subject, ...
  const hasVersion = fields[0]?.tagClass === asn1.Class.CONTEXT_SPECIFIC;
  const name = fields[hasVersion ? 5 : 4]!;
  return { privateKey, name, keyIdentifier: subjectKeyIdentifierOf(certificate, caCert) };
}

interface CertificateFields {
  subject: forge.pki.CertificateField[];
  notBefore: Date;
  notAfter: Date;
  publicKey: CertificatePublicKey;
  extensions: object[];
}

function signCertificate(fields: CertificateFields, issuer: Pick<IssuerIdentity, "privateKey" | "name">): Buffer {
  const cert = forge.pki.createCertificate();
  cert.version = 2; // v3
  cert.serialNumber = randomSerial().toString("hex");
  cert.validity.notBefore = fields.notBefore;
  cert.validity.notAfter = fields.notAfter;
  cert.publicKey = fields.publicKey; // before setExtensions: the subjectKeyIdentifier is derived from it
  cert.setSubject(fields.subject);
  cert.setExtensions(fields.extensions);
  cert.siginfo.algorithmOid = SHA256_WITH_RSA;
  cert.signatureOid = SHA256_WITH_RSA;

  const tbs = getTBSCertificate(cert);
  (tbs.value as Asn1[])[3] = issuer.name;
  const tbsDer = Buffer.from(asn1.toDer(tbs).getBytes(), "binary");
  const signature = sign("sha256", tbsDer, issuer.privateKey); // PKCS#1 v1.5 for an RSA key

  const certificate = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    tbs,
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(SHA256_WITH_RSA).getBytes()),
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, ""),
    ]),
    // The leading 0 is the BIT STRING's count of unused bits.
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, "\x00" + signature.toString("binary")),
  ]);
  return Buffer.from(asn1.toDer(certificate).getBytes(), "binary");
}

/** UTF8String rather than forge's default PrintableString, which cannot hold "_" or non-ASCII host names. */
function utf8Attribute(shortName: "CN" | "O", value: string): forge.pki.CertificateField {
  const type = shortName === "CN" ? "2.5.4.3" : "2.5.4.10";
  return { type, shortName, value, valueTagClass: asn1.Type.UTF8 as unknown as forge.asn1.Class };
}

function subjectKeyIdentifierOf(certificate: Asn1, caCert: X509Certificate): Buffer {
  try {
    const parsed = forge.pki.certificateFromAsn1(certificate);
    const extension = parsed.getExtension("subjectKeyIdentifier") as { subjectKeyIdentifier?: string } | undefined;
    if (extension?.subjectKeyIdentifier) return Buffer.from(extension.subjectKeyIdentifier, "hex");
  } catch {
    // fall through to the RFC 5280 method 1 value, which is what this module puts in its CA certificates
  }
  const rsaPublicKey = caCert.publicKey.export({ type: "pkcs1", format: "der" });
  return createHash("sha1").update(rsaPublicKey).digest();
}
