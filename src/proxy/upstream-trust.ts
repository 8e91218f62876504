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
  const roots = new Set<string>(nodeRoots());
  for (const file of extraFiles) for (const pem of readPemFile(file)) roots.add(pem);
  return [...roots];
}

/**
 * Node's default and system stores. `tls.getCACertificates` exists from Node 22.15; before that, the bundled
 * roots and NODE_EXTRA_CA_CERTS (read here: an explicit CA list replaces Node's defaults), without the
 * operating system's store (--upstream-ca takes a private CA there).
 */
function nodeRoots(): string[] {
  const getCACertificates = (tls as Partial<Pick<typeof tls, "getCACertificates">>).getCACertificates;
  if (typeof getCACertificates === "function") return [...getCACertificates("default"), ...getCACertificates("system")];
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  let extraPems: string[] = [];
  try {
    if (extra) extraPems = readFileSync(extra, "utf8").match(PEM) ?? [];
  } catch {
    // Node itself only warns about an unreadable NODE_EXTRA_CA_CERTS; so does nothing here.
  }
  return [...tls.rootCertificates, ...extraPems];
}

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function readPemFile(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new TrustError(`--upstream-ca ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const pems = text.match(PEM) ?? [];
  if (pems.length === 0) throw new TrustError(`--upstream-ca ${file}: no PEM certificate in it`);
  for (const pem of pems) {
    try {
      new X509Certificate(pem);
    } catch (err) {
      throw new TrustError(`--upstream-ca ${file}: a certificate in it does not parse (${(err as Error).message})`);
    }
  }
  return pems;
}
