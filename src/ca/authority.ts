/**
 * The local certificate authority: created in its folder on first start, loaded from there afterwards.
 *
 *   const ca = await loadOrCreateCa(dir);        // throws CaError with a message meant for the user
 *   if (ca.warning) log.warn(ca.warning);        // expired, expiring within 30 days, or not yet valid
 *   ca.info();                                   // for `mcp-wiretap ca show`
 *   const leaves = await LeafIssuer.create(ca);  // see leaf-issuer.ts
 *
 * Files: ca.pem (0644), ca-key.pem (PKCS#8, 0600), bundle.pem (system roots + ca.pem, 0644), folder 0700
 * when created here (an existing folder must be ours and not writable by others; see permissions.ts).
 * An existing CA is never replaced behind the user's back: they may have installed it in trust stores, so
 * a half, broken or mismatched pair is an error that names the files, and an old CA only gives a warning.
 * A key that others could read is refused: it may have been copied, so the way out is a new CA.
 */
import { X509Certificate, createPrivateKey, generateKeyPair, type KeyObject } from "node:crypto";
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { ensureBundle, writeFileAtomic } from "./ca-files.js";
import { CaError, startOverAdvice } from "./errors.js";
import { PRIVATE_FILE_MODE, ensureCaDir, readCaFile } from "./permissions.js";
import { createCaCertificate, issuerIdentity, type IssuerIdentity } from "./x509-native.js";

export { CaError } from "./errors.js";

const DAY = 24 * 60 * 60 * 1000;
/** Ten years: the CA never leaves this machine and renewing it means re-trusting it in every client. */
export const CA_VALIDITY_DAYS = 3650;
export const CA_EXPIRY_WARNING_DAYS = 30;
const PUBLIC_FILE_MODE = 0o644;

export interface CaInfo {
  /** e.g. "CN=mcp-wiretap CA (laptop), O=mcp-wiretap" */
  subject: string;
  /** ISO 8601 */
  notBefore: string;
  notAfter: string;
  /** Colon-separated upper-case hex, as `openssl x509 -fingerprint -sha256` prints it. */
  fingerprint256: string;
  certPath: string;
  keyPath: string;
}

export interface CertificateAuthority {
  readonly dir: string;
  readonly certPath: string;
  readonly keyPath: string;
  readonly bundlePath: string;
  readonly certPem: string;
  /** true when this call generated the CA (tell the user to trust it). */
  readonly created: boolean;
  /** Set when the CA has expired, expires soon or is not valid yet; the CA is still returned. */
  readonly warning: string | null;
  /** Epoch milliseconds. */
  readonly notBefore: number;
  readonly notAfter: number;
  /** What LeafIssuer signs with. Holds the private key: keep it out of logs. */
  readonly issuer: IssuerIdentity;
  info(): CaInfo;
}

export interface LoadCaOptions {
  /** Clock in epoch milliseconds, for tests. */
  now?: () => number;
  /** Host name put in a new CA's subject; defaults to os.hostname(). */
  hostname?: string;
}

/** Whether `dir` holds a CA certificate (or a link where one would be): loadOrCreateCa would not make one. */
export function holdsCa(dir: string): boolean {
  const absoluteDir = path.resolve(dir);
  return ["ca.pem", "ca-key.pem"].some((name) => existsSync(path.join(absoluteDir, name)));
}

export async function loadOrCreateCa(dir: string, options: LoadCaOptions = {}): Promise<CertificateAuthority> {
  const now = options.now ?? Date.now;
  const absoluteDir = path.resolve(dir);
  const certPath = path.join(absoluteDir, "ca.pem");
  const keyPath = path.join(absoluteDir, "ca-key.pem");
  const bundlePath = path.join(absoluteDir, "bundle.pem");
  const paths = { certPath, keyPath };

  ensureCaDir(absoluteDir);
  let keyPem = readCaFile(keyPath, "key", paths);
  let certPem = readCaFile(certPath, "certificate", paths);
  let created = false;

  if (certPem === null && keyPem === null) {
    const fresh = await generateCa(now(), options.hostname ?? hostname());
    created = await placeNewCa(paths, fresh);
    ({ certPem, keyPem } = created ? fresh : await waitForOtherProcess(paths));
  }
  if (certPem === null) {
    throw new CaError(`Found the CA key ${keyPath} but not its certificate ${certPath}. ${startOver(paths)}`);
  }
  if (keyPem === null) {
    throw new CaError(
      `Found the CA certificate ${certPath} but not its private key ${keyPath}, so no certificates can be ` +
        `issued. Restore ca-key.pem from a backup. ${startOver(paths)}`,
    );
  }

  const { cert, privateKey } = parseCa(paths, certPem, keyPem);
  await ensureBundle(bundlePath, certPem, PUBLIC_FILE_MODE);

  const validity = validityOf(cert);
  const info: CaInfo = {
    subject: cert.subject.split("\n").join(", "),
    notBefore: new Date(validity.notBefore).toISOString(),
    notAfter: new Date(validity.notAfter).toISOString(),
    fingerprint256: cert.fingerprint256,
    certPath,
    keyPath,
  };
  return {
    dir: absoluteDir,
    certPath,
    keyPath,
    bundlePath,
    certPem,
    created,
    warning: validityWarning(validity, now(), paths),
    notBefore: validity.notBefore,
    notAfter: validity.notAfter,
    issuer: issuerIdentity(cert, privateKey),
    info: () => ({ ...info }),
  };
}

interface CaPaths {
  certPath: string;
  keyPath: string;
}

interface CaPems {
  certPem: string;
  keyPem: string;
}

const generateRsaKeyPair = promisify(generateKeyPair);

async function generateCa(now: number, host: string): Promise<CaPems> {
  const { publicKey, privateKey } = await generateRsaKeyPair("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  const notBefore = now - 60 * 60 * 1000; // an hour back, for clients whose clock runs a little behind
  const certPem = createCaCertificate({
    commonName: `mcp-wiretap CA (${host})`,
    organization: "mcp-wiretap",
    notBefore: new Date(notBefore),
    notAfter: new Date(notBefore + CA_VALIDITY_DAYS * DAY),
    publicKeyPem: publicKey,
    privateKey: createPrivateKey(privateKey),
  });
  return { certPem, keyPem: privateKey };
}

/** Key first, each only if absent: if another process is creating a CA right now, exactly one wins. */
async function placeNewCa(paths: CaPaths, fresh: CaPems): Promise<boolean> {
  if (!(await writeFileAtomic(paths.keyPath, fresh.keyPem, PRIVATE_FILE_MODE, { exclusive: true }))) return false;
  if (!(await writeFileAtomic(paths.certPath, fresh.certPem, PUBLIC_FILE_MODE, { exclusive: true }))) {
    throw new CaError(`${paths.certPath} appeared while a new CA was being created. ${startOver(paths)}`);
  }
  return true;
}

/** Another process placed its key first: its certificate follows within milliseconds. */
async function waitForOtherProcess(paths: CaPaths): Promise<{ certPem: string | null; keyPem: string | null }> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const certPem = readCaFile(paths.certPath, "certificate", paths);
    if (certPem !== null) return { certPem, keyPem: readCaFile(paths.keyPath, "key", paths) };
    await sleep(50);
  }
  return { certPem: null, keyPem: readCaFile(paths.keyPath, "key", paths) };
}

function parseCa(paths: CaPaths, certPem: string, keyPem: string): { cert: X509Certificate; privateKey: KeyObject } {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (error) {
    throw new CaError(`${paths.certPath} is not a readable PEM certificate (${reason(error)}). ${startOver(paths)}`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(keyPem);
  } catch (error) {
    throw new CaError(`${paths.keyPath} is not a readable PEM private key (${reason(error)}). ${startOver(paths)}`);
  }
  if (privateKey.asymmetricKeyType !== "rsa") {
    throw new CaError(`${paths.keyPath} is not an RSA key; mcp-wiretap signs with RSA only. ${startOver(paths)}`);
  }
  if (!cert.ca) {
    throw new CaError(`${paths.certPath} is not a CA certificate (basicConstraints CA:TRUE). ${startOver(paths)}`);
  }
  if (!cert.checkPrivateKey(privateKey)) {
    throw new CaError(
      `${paths.certPath} and ${paths.keyPath} do not belong together (the key is not the certificate's). ` +
        `Put back the matching pair. ${startOver(paths)}`,
    );
  }
  if (!cert.verify(cert.publicKey)) {
    throw new CaError(`${paths.certPath} is not a valid self-signed certificate. ${startOver(paths)}`);
  }
  return { cert, privateKey };
}

/**
 * The certificate's validity in epoch milliseconds. `validFromDate`/`validToDate` exist from Node 22.10 on;
 * before that only the OpenSSL strings (`validFrom`, "Nov 23 20:22:10 2026 GMT"), which Date parses.
 */
function validityOf(cert: X509Certificate): { notBefore: number; notAfter: number } {
  const dates = cert as Partial<Pick<X509Certificate, "validFromDate" | "validToDate">>;
  return {
    notBefore: dates.validFromDate?.getTime() ?? Date.parse(cert.validFrom),
    notAfter: dates.validToDate?.getTime() ?? Date.parse(cert.validTo),
  };
}

function validityWarning(validity: { notBefore: number; notAfter: number }, now: number, paths: CaPaths): string | null {
  const { certPath } = paths;
  const { notBefore, notAfter } = validity;
  const until = new Date(notAfter).toISOString();
  if (now < notBefore) {
    return (
      `The mcp-wiretap CA ${certPath} is not valid before ${new Date(notBefore).toISOString()}: ` +
      `check this machine's clock.`
    );
  }
  if (now >= notAfter) {
    return `The mcp-wiretap CA ${certPath} expired on ${until}; clients reject all it signs. ${startOver(paths)}`;
  }
  const daysLeft = Math.ceil((notAfter - now) / DAY);
  if (daysLeft <= CA_EXPIRY_WARNING_DAYS) {
    return `The mcp-wiretap CA ${certPath} expires on ${until} (in ${daysLeft} days). ${startOver(paths)}`;
  }
  return null;
}

function startOver(paths: CaPaths): string {
  return startOverAdvice(paths.certPath, paths.keyPath);
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
