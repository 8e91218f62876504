import { readFileSync } from "node:fs";
import tls from "node:tls";
import { X509Certificate } from "node:crypto";
import { UsageError } from "../util/usage-error.js";

export class TrustError extends UsageError {}

/**
 * Roots trusted on the proxy→server leg: Node's default store (its bundled roots plus
 * NODE_EXTRA_CA_CERTS), the operating system's store, and the files given with --upstream-ca.
 */
export function upstreamRoots(extraFiles: readonly string[]): string[] {
  const roots = new Set<string>([...tls.getCACertificates("default"), ...tls.getCACertificates("system")]);
  for (const file of extraFiles) for (const pem of readPemFile(file)) roots.add(pem);
  return [...roots];
}

function readPemFile(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new TrustError(`--upstream-ca ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const pems = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (pems.length === 0) throw new TrustError(`--upstream-ca ${file}: no PEM certificate in it`);
  for (const pem of pems) {
    try {
      new X509Certificate(pem);
    } catch {
      throw new TrustError(`--upstream-ca ${file}: a certificate in it does not parse`);
    }
  }
  return pems;
}
