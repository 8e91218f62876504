/**
 * Certificates for the hosts the proxy intercepts, signed by the local CA.
 *
 *   const leaves = await LeafIssuer.create(ca);     // one per process: generates the shared leaf key
 *   SNICallback: (name, cb) => cb(null, leaves.secureContextFor(name))   // TLS hot path, cached
 *   leaves.certificateFor("127.0.0.1");             // { host, certPem, notBefore, notAfter }
 *   leaves.keyPem;                                  // the private key of every leaf (PKCS#8 PEM)
 *
 * One key pair serves every host: generating an RSA key per host would cost far more than signing, and
 * the key never leaves the process. Issuing for a new host is a forge TBS layout plus one native RSA
 * signature, around a millisecond. Certificates are kept in a bounded LRU and re-issued 7 days before
 * they expire.
 */
import { generateKeyPair } from "node:crypto";
import tls from "node:tls";
import { promisify } from "node:util";
import type { CertificateAuthority } from "./authority.js";
import { CaError, startOverAdvice } from "./errors.js";
import { parseHost, type CertificateSubject } from "./host-names.js";
import { createLeafCertificate, derToPem, importPublicKey, type CertificatePublicKey } from "./x509-native.js";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
/** The longest TLS server certificate validity browsers accept (398 days), with a day to spare. */
export const LEAF_VALIDITY_DAYS = 397;
export const LEAF_RENEW_BEFORE_DAYS = 7;
export const DEFAULT_LEAF_CACHE_SIZE = 1000;

export interface IssuedCertificate {
  /** The host as it appears in the certificate (lower-cased, punycode, no brackets or zone id). */
  readonly host: string;
  readonly certPem: string;
  /** Epoch milliseconds. */
  readonly notBefore: number;
  readonly notAfter: number;
}

export interface LeafIssuerOptions {
  /** Clock in epoch milliseconds, for tests. */
  now?: () => number;
  /** Hosts kept in memory (least recently used dropped first). */
  cacheSize?: number;
}

interface CacheEntry {
  readonly certificate: IssuedCertificate;
  context: tls.SecureContext | null;
}

const generateRsaKeyPair = promisify(generateKeyPair);

export class LeafIssuer {
  readonly #cache = new Map<string, CacheEntry>();

  private constructor(
    private readonly ca: CertificateAuthority,
    private readonly privateKeyPem: string,
    private readonly publicKey: CertificatePublicKey,
    private readonly now: () => number,
    private readonly cacheSize: number,
  ) {}

  /** Generates the process's leaf key pair off the event loop. Throws CaError if the CA has expired. */
  static async create(ca: CertificateAuthority, options: LeafIssuerOptions = {}): Promise<LeafIssuer> {
    const now = options.now ?? Date.now;
    assertCaUsable(ca, now());
    const cacheSize = options.cacheSize ?? DEFAULT_LEAF_CACHE_SIZE;
    if (!Number.isInteger(cacheSize) || cacheSize < 1) {
      throw new RangeError(`cacheSize must be a whole number ≥ 1, got ${cacheSize}`);
    }
    const { publicKey, privateKey } = await generateRsaKeyPair("rsa", {
      modulusLength: 2048,
      publicKeyEncoding: { type: "spki", format: "pem" },
      privateKeyEncoding: { type: "pkcs8", format: "pem" },
    });
    const issuer = new LeafIssuer(ca, privateKey, importPublicKey(publicKey), now, cacheSize);
    // The first certificate pays for lazy initialisation in forge and V8 (10-20 ms); pay it here, not on the
    // first intercepted connection. localhost is as likely a host as any to be asked for later.
    issuer.certificateFor("localhost");
    return issuer;
  }

  /** The private key shared by every leaf certificate. */
  get keyPem(): string {
    return this.privateKeyPem;
  }

  /** Hosts currently cached. */
  get size(): number {
    return this.#cache.size;
  }

  /** Throws CaError for a host that is neither a valid DNS name nor an IP literal, or if the CA has expired. */
  certificateFor(host: string): IssuedCertificate {
    return this.entryFor(host).certificate;
  }

  secureContextFor(host: string): tls.SecureContext {
    const entry = this.entryFor(host);
    entry.context ??= tls.createSecureContext({ key: this.privateKeyPem, cert: entry.certificate.certPem });
    return entry.context;
  }

  private entryFor(host: string): CacheEntry {
    const subject = parseHost(host);
    const now = this.now();
    let entry = this.#cache.get(subject.cacheKey);
    if (entry === undefined || this.needsNewCertificate(entry.certificate, now)) {
      entry = { certificate: this.issue(subject, now), context: null };
    }
    // Re-inserting moves the key to the end of the Map's order, so the first key is the least recently used.
    this.#cache.delete(subject.cacheKey);
    this.#cache.set(subject.cacheKey, entry);
    if (this.#cache.size > this.cacheSize) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    return entry;
  }

  private needsNewCertificate(certificate: IssuedCertificate, now: number): boolean {
    if (now < certificate.notBefore || now >= certificate.notAfter) return true;
    // A leaf capped at the CA's own expiry cannot be renewed into anything longer: keep it until it lapses.
    return certificate.notAfter - now < LEAF_RENEW_BEFORE_DAYS * DAY && certificate.notAfter < this.ca.notAfter;
  }

  private issue(subject: CertificateSubject, now: number): IssuedCertificate {
    assertCaUsable(this.ca, now);
    // An hour back for clients whose clock runs behind; whole seconds because that is what X.509 stores.
    const notBefore = Math.max(Math.floor((now - HOUR) / 1000) * 1000, this.ca.notBefore);
    const notAfter = Math.min(notBefore + LEAF_VALIDITY_DAYS * DAY, this.ca.notAfter);
    const der = createLeafCertificate(
      { subject, notBefore: new Date(notBefore), notAfter: new Date(notAfter), publicKey: this.publicKey },
      this.ca.issuer,
    );
    const host = subject.kind === "dns" ? subject.name : subject.address;
    return { host, certPem: derToPem(der), notBefore, notAfter };
  }
}

/** Issuers kept per CA in a process: a process runs one proxy, or a few (a UI's replays, tests). */
const MAX_SHARED_ISSUERS = 4;
const sharedIssuers = new Map<string, Promise<LeafIssuer>>();

/**
 * The issuer of a CA, made once per process: its RSA key pair takes 50-200 ms to generate, which every proxy
 * a replay starts (src/replay/http-replay.ts, one per replay from the web UI) would pay again for the same CA.
 * The CA's validity is checked on every call, as `create` checks it.
 */
export async function sharedLeafIssuer(ca: CertificateAuthority): Promise<LeafIssuer> {
  assertCaUsable(ca, Date.now());
  const key = `${ca.certPath}\n${ca.info().fingerprint256}`;
  let issuer = sharedIssuers.get(key);
  if (!issuer) {
    issuer = LeafIssuer.create(ca);
    sharedIssuers.set(key, issuer);
    issuer.catch(() => sharedIssuers.delete(key));
    if (sharedIssuers.size > MAX_SHARED_ISSUERS) sharedIssuers.delete(sharedIssuers.keys().next().value as string);
  }
  return issuer;
}

function assertCaUsable(ca: CertificateAuthority, now: number): void {
  if (now >= ca.notAfter) {
    const expired = new Date(ca.notAfter).toISOString();
    throw new CaError(
      `The mcp-wiretap CA ${ca.certPath} expired on ${expired}; clients would reject every certificate it ` +
        `signs. ${startOverAdvice(ca.certPath, ca.keyPath)}`,
    );
  }
}
