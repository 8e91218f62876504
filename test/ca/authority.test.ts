import { X509Certificate } from "node:crypto";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { rootCertificates } from "node:tls";
import forge from "node-forge";
import { describe, expect, it } from "vitest";
import { CaError, loadOrCreateCa } from "../../src/ca/index.js";
import { tempDir } from "./temp-dirs.js";

const DAY = 24 * 60 * 60 * 1000;
const posixModes = process.platform !== "win32";

async function mode(file: string): Promise<number> {
  return (await stat(file)).mode & 0o777;
}

describe("loadOrCreateCa", () => {
  it("creates the CA on first start and reuses it afterwards", async () => {
    const dir = path.join(await tempDir(), "ca");
    const first = await loadOrCreateCa(dir);
    expect(first.created).toBe(true);
    expect(first.warning).toBeNull();

    const second = await loadOrCreateCa(dir);
    expect(second.created).toBe(false);
    expect(second.info().fingerprint256).toBe(first.info().fingerprint256);
    expect(second.certPem).toBe(first.certPem);
  });

  it("gives each installation its own CA", async () => {
    const a = await loadOrCreateCa(await tempDir());
    const b = await loadOrCreateCa(await tempDir());
    expect(a.info().fingerprint256).not.toBe(b.info().fingerprint256);
    const serialA = new X509Certificate(a.certPem).serialNumber;
    const serialB = new X509Certificate(b.certPem).serialNumber;
    expect(serialA).not.toBe(serialB);
    expect(serialA).toHaveLength(32);
  });

  it("creates exactly one CA when two starts race on an empty folder", async () => {
    const dir = await tempDir();
    const [a, b] = await Promise.all([loadOrCreateCa(dir), loadOrCreateCa(dir)]);
    expect(a.info().fingerprint256).toBe(b.info().fingerprint256);
    expect([a.created, b.created].filter(Boolean)).toHaveLength(1);
  });

  it("writes the certificate, a PKCS#8 key and the bundle with the right modes", async () => {
    const dir = path.join(await tempDir(), "nested", "ca");
    const ca = await loadOrCreateCa(dir);
    expect(ca.certPath).toBe(path.join(dir, "ca.pem"));
    expect(ca.keyPath).toBe(path.join(dir, "ca-key.pem"));
    expect(ca.bundlePath).toBe(path.join(dir, "bundle.pem"));

    expect(await readFile(ca.certPath, "utf8")).toBe(ca.certPem);
    expect(await readFile(ca.keyPath, "utf8")).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    const bundle = await readFile(ca.bundlePath, "utf8");
    expect(bundle).toContain(ca.certPem.trim());
    expect(bundle).toContain(rootCertificates[0]!);
    if (posixModes) {
      expect(await mode(dir)).toBe(0o700);
      expect(await mode(ca.keyPath)).toBe(0o600);
      expect(await mode(ca.certPath)).toBe(0o644);
      expect(await mode(ca.bundlePath)).toBe(0o644);
    }
  });

  it("rewrites a missing bundle", async () => {
    const dir = await tempDir();
    const ca = await loadOrCreateCa(dir);
    await rm(ca.bundlePath);
    await loadOrCreateCa(dir);
    expect(await readFile(ca.bundlePath, "utf8")).toContain(ca.certPem.trim());
  });

  it("makes a CA certificate with the required fields and extensions", async () => {
    const ca = await loadOrCreateCa(await tempDir(), { hostname: "build-box" });
    const x509 = new X509Certificate(ca.certPem);
    expect(x509.ca).toBe(true);
    expect(x509.subject).toBe("CN=mcp-wiretap CA (build-box)\nO=mcp-wiretap");
    expect(x509.issuer).toBe(x509.subject);
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const validity = x509.validToDate.getTime() - x509.validFromDate.getTime();
    expect(validity).toBe(3650 * DAY);

    const cert = forge.pki.certificateFromPem(ca.certPem);
    expect(cert.siginfo.algorithmOid).toBe(forge.pki.oids["sha256WithRSAEncryption"]);
    expect(cert.getExtension("basicConstraints")).toMatchObject({ critical: true, cA: true, pathLenConstraint: 0 });
    expect(cert.getExtension("keyUsage")).toMatchObject({
      critical: true,
      keyCertSign: true,
      cRLSign: true,
      digitalSignature: false,
    });
    expect(cert.getExtension("subjectKeyIdentifier")).toMatchObject({
      subjectKeyIdentifier: cert.generateSubjectKeyIdentifier().toHex(),
    });
  });

  it("names the tool and this host by default, and reports info() for `ca show`", async () => {
    const ca = await loadOrCreateCa(await tempDir());
    const info = ca.info();
    const x509 = new X509Certificate(ca.certPem);
    expect(info).toEqual({
      subject: `CN=${`mcp-wiretap CA (${os.hostname()})`.slice(0, 64)}, O=mcp-wiretap`,
      notBefore: x509.validFromDate.toISOString(),
      notAfter: x509.validToDate.toISOString(),
      fingerprint256: x509.fingerprint256,
      certPath: ca.certPath,
      keyPath: ca.keyPath,
    });
    expect(info.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  });
});

describe("loadOrCreateCa refuses a damaged CA", () => {
  async function expectCaError(dir: string, ...fragments: string[]): Promise<void> {
    const error = await loadOrCreateCa(dir).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CaError);
    for (const fragment of fragments) expect((error as Error).message).toContain(fragment);
  }

  it("when the key is missing, naming both files and never regenerating", async () => {
    const dir = await tempDir();
    const ca = await loadOrCreateCa(dir);
    await rm(ca.keyPath);
    await expectCaError(dir, ca.certPath, ca.keyPath, "not its private key");
    expect(await readFile(ca.certPath, "utf8")).toBe(ca.certPem);
  });

  it("when the certificate is missing", async () => {
    const dir = await tempDir();
    const ca = await loadOrCreateCa(dir);
    await rm(ca.certPath);
    await expectCaError(dir, ca.certPath, ca.keyPath, "not its certificate");
  });

  it("when the certificate does not parse", async () => {
    const dir = await tempDir();
    const ca = await loadOrCreateCa(dir);
    await writeFile(ca.certPath, "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
    await expectCaError(dir, ca.certPath, "not a readable PEM certificate");
  });

  it("when the key does not parse", async () => {
    const dir = await tempDir();
    const ca = await loadOrCreateCa(dir);
    await writeFile(ca.keyPath, "garbage", { mode: 0o600 });
    await expectCaError(dir, ca.keyPath, "not a readable PEM private key");
  });

  it("when certificate and key do not match", async () => {
    const [dirA, dirB] = [await tempDir(), await tempDir()];
    const a = await loadOrCreateCa(dirA);
    const b = await loadOrCreateCa(dirB);
    await writeFile(a.keyPath, await readFile(b.keyPath, "utf8"));
    await expectCaError(dirA, a.certPath, a.keyPath, "do not belong together");
  });
});

describe("loadOrCreateCa warns about an old CA", () => {
  it("that expires within 30 days", async () => {
    const dir = await tempDir();
    const created = Date.now() - 3640 * DAY;
    await loadOrCreateCa(dir, { now: () => created });
    const ca = await loadOrCreateCa(dir);
    expect(ca.warning).toMatch(/expires on .* \(in 1[01] days\)/);
    expect(ca.warning).toContain(ca.certPath);
  });

  it("that has expired, without replacing it", async () => {
    const dir = await tempDir();
    const first = await loadOrCreateCa(dir, { now: () => Date.now() - 3700 * DAY });
    const ca = await loadOrCreateCa(dir);
    expect(ca.warning).toContain("expired on");
    expect(ca.info().fingerprint256).toBe(first.info().fingerprint256);
  });
});
