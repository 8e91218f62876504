/**
 * What `run --proxy` and `env` check about the proxy they point clients at: that something answers there,
 * and that the CA it signs with (its `/healthz` says, as `ca.sha256`) is the one clients are told to trust.
 * Without these checks a client fails later with ECONNREFUSED or UNABLE_TO_VERIFY_LEAF_SIGNATURE.
 */
import http from "node:http";
import https from "node:https";
import { redactUserinfo } from "../log/redact.js";

export type ProxyProbe =
  | { answered: false; reason: string }
  /** `caSha256` null: it answered, but not as an mcp-wiretap proxy naming its CA. */
  | { answered: true; caSha256: string | null };

/** A health answer is a few hundred bytes; anything past this is not one. */
const MAX_HEALTH_BYTES = 16 * 1024;
const FINGERPRINT = /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/;

/** Asks `GET /healthz` of the proxy at `proxyUrl` (credentials left out: the health answer needs none). */
export function probeProxy(proxyUrl: string, timeoutMs = 2_000): Promise<ProxyProbe> {
  const url = new URL("/healthz", proxyUrl);
  url.username = "";
  url.password = "";
  const get = url.protocol === "https:" ? https.get : http.get;
  return new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: timeoutMs, headers: { accept: "application/json" } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_HEALTH_BYTES) return void res.destroy();
        chunks.push(chunk);
      });
      res.on("close", () => resolve({ answered: true, caSha256: size > MAX_HEALTH_BYTES ? null : fingerprintIn(Buffer.concat(chunks)) }));
    });
    req.on("timeout", () => req.destroy(Object.assign(new Error("no answer"), { code: `no answer within ${timeoutMs / 1000} s` })));
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ answered: false, reason: err.code ?? err.message }));
  });
}

function fingerprintIn(body: Buffer): string | null {
  try {
    const sha256 = (JSON.parse(body.toString("utf8")) as { ca?: { sha256?: unknown } } | null)?.ca?.sha256;
    return typeof sha256 === "string" && FINGERPRINT.test(sha256) ? sha256 : null;
  } catch {
    return null;
  }
}

export interface TrustedCa {
  certPath: string;
  fingerprint256: string;
}

/** How the proxy and the CA clients will trust fit together: `ok` false when clients would fail. */
export function judgeAttachment(proxyUrl: string, probe: ProxyProbe, ca: TrustedCa): { ok: boolean; message: string } {
  const at = redactUserinfo(proxyUrl);
  if (!probe.answered) return { ok: false, message: `nothing answers at ${at} (${probe.reason})` };
  if (probe.caSha256 === null) {
    return { ok: true, message: `the proxy at ${at} does not say which CA it signs with (not mcp-wiretap, or an older one): clients trust ${ca.certPath} (SHA-256 ${ca.fingerprint256})` };
  }
  if (probe.caSha256 !== ca.fingerprint256) {
    return { ok: false, message: `the proxy at ${at} signs with another CA (SHA-256 ${probe.caSha256}) than ${ca.certPath} (SHA-256 ${ca.fingerprint256}): clients would refuse its certificates` };
  }
  return { ok: true, message: `the proxy at ${at} signs with the CA clients trust: ${ca.certPath} (SHA-256 ${ca.fingerprint256})` };
}
