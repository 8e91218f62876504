import { describe, expect, it } from "vitest";
import { secretsDetector } from "../../src/detectors/index.js";
import { ALNUM, BASE64, HEX, jwt, secretSamples, token } from "./samples.js";

const scanText = (text: string) => secretsDetector.scan({ text });

/** Secret material that must never appear in a finding: the value, and for PEM blocks each base64 line. */
function secretParts(secret: string): string[] {
  if (!secret.includes("-----BEGIN")) return [secret];
  return secret.split("\n").filter((line) => /^[A-Za-z0-9+/=]{20,}$/.test(line));
}

describe("secrets: positive corpus", () => {
  for (const sample of secretSamples()) {
    it(`finds ${sample.type} in ${JSON.stringify(sample.text.slice(0, 40))}…`, () => {
      const findings = scanText(sample.text);
      expect(findings.map((finding) => finding.type)).toContain(sample.type);
      expect(findings.every((finding) => finding.path === "/text" && finding.detector === "secrets")).toBe(true);
      const serialized = JSON.stringify(findings);
      for (const part of secretParts(sample.secret)) expect(serialized).not.toContain(part);
    });
  }

  it("gives a redacted hint that shows only the fixed prefix and the length", () => {
    const id = "AKIA" + token("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 3);
    expect(scanText(`key ${id}`)).toEqual([
      { detector: "secrets", type: "aws_access_key_id", path: "/text", detail: "AKIA…(20 chars)" },
    ]);
  });

  it("recognises AWS secret keys and Twilio tokens by the member that holds them", () => {
    const secret = token(BASE64, 40, 41);
    const findings = secretsDetector.scan({ Credentials: { AccessKeyId: "x", aws_secret_access_key: secret } });
    expect(findings).toEqual([
      expect.objectContaining({ type: "aws_secret_access_key", path: "/Credentials/aws_secret_access_key" }),
    ]);
    expect(JSON.stringify(findings)).not.toContain(secret);
    expect(secretsDetector.scan({ twilio_auth_token: token(HEX, 32, 42) })[0]?.type).toBe("twilio_auth_token");
  });

  it("reports a JWT once, not also as a bearer token, and names its algorithm", () => {
    const findings = scanText(`Authorization: Bearer ${jwt("RS256")}`);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ type: "jwt", detail: expect.stringContaining("alg=RS256") });
  });

  it("counts repeated secrets of one type in one string as one finding", () => {
    const a = "ghp_" + token(ALNUM, 36, 50);
    const b = "ghp_" + token(ALNUM, 36, 51);
    expect(scanText(`${a} and ${b}`)).toEqual([expect.objectContaining({ type: "github_token", detail: "ghp_…(40 chars) (+1 more)" })]);
  });
});

describe("secrets: negative corpus", () => {
  const benign: Array<[string, string]> = [
    ["prose", "The quick brown fox jumps over the lazy dog. Please reset your password via the settings page."],
    ["UUIDs", "request 3f2504e0-4f89-11d3-9a0c-0305e82c3301 and 123e4567-e89b-12d3-a456-426614174000"],
    ["git SHAs", "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (short 9fceb02) parent e83c5163316f89bfbde7d9ab23ca2e25604af290"],
    ["hashes", "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 md5 d41d8cd98f00b204e9800998ecf8427e"],
    ["a bare 40-char base64 value without an AWS name", `value=${token(BASE64, 40, 60)}`],
    ["hyphenated words after sk-", "install sk-learn-compatible-estimators-for-pipelines and risk-assessment-framework-tools"],
    ["placeholder Slack token", "set SLACK_BOT_TOKEN to xoxb-your-bot-token-here"],
    ["placeholder URL credentials", "postgres://user:password@localhost:5432/db or https://user:${PASSWORD}@host/path"],
    ["URL without credentials", "https://github.com/modelcontextprotocol/servers/blob/main/README.md?tab=readme#install"],
    ["bearer in prose", "Uses Bearer authentication with the configured credentials for every request."],
    ["PEM header without a key", "Paste a key that starts with -----BEGIN PRIVATE KEY----- into the field."],
    ["public key and certificate", "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----"],
    ["three dotted base64url parts that are not a JWT", "eyJub3QiOiJhIGhlYWRlciJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"],
    ["version strings and identifiers", "v1.2.3-beta.4 AKIAshort ghp_short npm_package_version SG.short.value pypi-project"],
    ["camel-case identifiers", "skipAuthorizationCheckForInternalCalls getAccessTokenFromEnvironmentVariable"],
  ];
  for (const [label, text] of benign) {
    it(`finds nothing in ${label}`, () => expect(scanText(text)).toEqual([]));
  }

  it("handles a megabyte-long bearer value made of many short segments", () => {
    expect(scanText(`Bearer ${"a1-".repeat(400_000)}`)).toEqual([]);
  });

  it("finds nothing in a base64 PNG data URL", () => {
    const png = Buffer.from(Array.from({ length: 30_000 }, (_, index) => (index * 7919 + (index >> 3)) & 0xff)).toString("base64");
    expect(scanText(`data:image/png;base64,${png}`)).toEqual([]);
  });
});
