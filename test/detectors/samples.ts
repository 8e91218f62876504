import { generateKeyPairSync } from "node:crypto";

/**
 * Credential-shaped test values, assembled at run time from a seeded generator so that no complete
 * token sits in the source (secret scanners on code hosts would rightly refuse it).
 */

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
export const ALNUM = UPPER + LOWER + DIGITS;
export const BASE64 = `${ALNUM}+/`;
export const HEX = "0123456789abcdef";

export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** `length` characters drawn from `alphabet`, always including a digit, an upper and a lower letter when available. */
export function token(alphabet: string, length: number, seed = 1): string {
  const next = seeded(seed);
  let result = "";
  for (let index = 0; index < length; index++) result += alphabet[Math.floor(next() * alphabet.length)];
  const ensure = (pool: string, at: number) => {
    const usable = [...pool].filter((char) => alphabet.includes(char));
    if (usable.length > 0 && ![...result].some((char) => usable.includes(char))) {
      result = result.slice(0, at) + usable[at % usable.length] + result.slice(at + 1);
    }
  };
  ensure(DIGITS, 1);
  ensure(UPPER, 2);
  ensure(LOWER, 3);
  return result;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

export function jwt(alg = "HS256"): string {
  return [b64url({ alg, typ: "JWT" }), b64url({ sub: "1234567890", name: "Jane", iat: 1516239022 }), token(ALNUM, 43, 9)].join(".");
}

export function pemPrivateKey(): string {
  const { privateKey } = generateKeyPairSync("ed25519");
  return privateKey.export({ type: "pkcs8", format: "pem" }).toString();
}

export function ecPrivateKey(): string {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return privateKey.export({ type: "sec1", format: "pem" }).toString();
}

/** One sample per secret type, keyed by the finding type it must produce. */
export function secretSamples(): Array<{ type: string; secret: string; text: string }> {
  const awsId = "AKIA" + token(UPPER + DIGITS, 16, 2);
  const awsSecret = token(BASE64, 40, 3);
  const samples: Array<[string, string, (secret: string) => string]> = [
    ["aws_access_key_id", awsId, (s) => `aws_access_key_id = ${s}`],
    ["aws_access_key_id", "ASIA" + token(UPPER + DIGITS, 16, 4), (s) => `temporary key ${s} expires soon`],
    ["aws_secret_access_key", awsSecret, (s) => `AWS_SECRET_ACCESS_KEY=${s}`],
    ["github_token", "ghp_" + token(ALNUM, 36, 5), (s) => `token: ${s}`],
    ["github_token", "gho_" + token(ALNUM, 36, 6), (s) => s],
    ["github_token", "github_pat_" + token(ALNUM, 22, 7) + "_" + token(ALNUM, 59, 8), (s) => `use ${s} to push`],
    ["gitlab_token", "glpat-" + token(ALNUM + "-_", 20, 10), (s) => `GITLAB_TOKEN="${s}"`],
    ["slack_token", `xoxb-${token(DIGITS, 12, 11)}-${token(DIGITS, 13, 12)}-${token(ALNUM, 24, 13)}`, (s) => `bot ${s}`],
    [
      "slack_webhook",
      `https://hooks.slack.com/services/T${token(UPPER + DIGITS, 8, 14)}/B${token(UPPER + DIGITS, 8, 15)}/${token(ALNUM, 24, 16)}`,
      (s) => `post to ${s} when done`,
    ],
    ["stripe_key", "sk_" + "live_" + token(ALNUM, 24, 17), (s) => `stripe.api_key = '${s}'`],
    ["stripe_key", "rk_" + "live_" + token(ALNUM, 24, 18), (s) => s],
    ["stripe_key", "sk_" + "test_" + token(ALNUM, 24, 19), (s) => s],
    ["openai_api_key", "sk-" + token(ALNUM, 48, 20), (s) => `OPENAI_API_KEY=${s}`],
    ["openai_api_key", "sk-proj-" + token(ALNUM + "-_", 120, 21), (s) => s],
    ["anthropic_api_key", "sk-ant-api03-" + token(ALNUM + "-_", 93, 22) + "AA", (s) => `x-api-key: ${s}`],
    ["google_api_key", "AIza" + token(ALNUM + "-_", 35, 23), (s) => `https://maps.googleapis.com/maps/api/js?key=${s}&v=3`],
    ["npm_token", "npm_" + token(ALNUM, 36, 24), (s) => `//registry.npmjs.org/:_authToken=${s}`],
    ["pypi_token", "pypi-AgEIcHlwaS5vcmc" + token(ALNUM + "-_", 120, 25), (s) => `password = ${s}`],
    ["twilio_api_key", "SK" + token(HEX, 32, 26), (s) => `api key sid ${s}`],
    ["sendgrid_api_key", `SG.${token(ALNUM + "-_", 22, 27)}.${token(ALNUM + "-_", 43, 28)}`, (s) => s],
    [
      "azure_storage_key",
      token(BASE64, 86, 29) + "==",
      (s) => `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${s};EndpointSuffix=core.windows.net`,
    ],
    ["url_credentials", "s3cr3t-Pa55w0rd", (s) => `git clone https://alice:${s}@git.internal.corp/repo.git`],
    ["jwt", jwt(), (s) => `id_token=${s}`],
    ["bearer_token", token(ALNUM + "-._~", 40, 30), (s) => `Authorization: Bearer ${s}`],
    ["private_key", pemPrivateKey(), (s) => `key file:\n${s}`],
    ["private_key", ecPrivateKey(), (s) => s],
  ];
  return samples.map(([type, secret, wrap]) => ({ type, secret, text: wrap(secret) }));
}
