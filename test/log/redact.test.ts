import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { queryCredentials } from "../../src/log/redact/query.js";
import {
  REDACTED,
  redactBody,
  redactFormBody,
  redactHeaders,
  redactText,
  redactUrlQuery,
  redactUserinfo,
} from "../../src/log/redact.js";

const CANARY = "canary-7f3a9c1e5b";
const JWT_CANARY =
  "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.c2lnbmF0dXJlLWNhbmFyeS03ZjNhOWMxZTVi";

function expectGone(result: unknown, ...secrets: string[]): void {
  const text = typeof result === "string" ? result : JSON.stringify(result);
  for (const secret of secrets) expect(text).not.toContain(secret);
}

describe("redactHeaders", () => {
  it("redacts credentials but keeps the auth scheme and the session id", () => {
    const headers = {
      authorization: `Bearer ${CANARY}`,
      "Proxy-Authorization": `Basic ${Buffer.from(`user:${CANARY}`).toString("base64")}`,
      cookie: `sid=${CANARY}; theme=dark`,
      "set-cookie": [`sid=${CANARY}; HttpOnly`, `csrf=${CANARY}`],
      "X-API-Key": CANARY,
      "x-goog-api-key": CANARY,
      "api-key": CANARY,
      "x-auth-token": CANARY,
      "x-amz-security-token": CANARY,
      "x-client-secret-value": CANARY,
      "x-authorization": CANARY,
      "mcp-session-id": "session-1234",
      "content-type": "application/json",
      "www-authenticate": 'Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource"',
      location: `https://client.example/cb?code=${CANARY}&state=s1`,
      "x-missing": undefined,
    };
    const result = redactHeaders(headers);
    expectGone(result, CANARY, Buffer.from(`user:${CANARY}`).toString("base64"));
    expect(result.authorization).toBe(`Bearer ${REDACTED}`);
    expect(result["Proxy-Authorization"]).toBe(`Basic ${REDACTED}`);
    expect(result["set-cookie"]).toEqual([REDACTED, REDACTED]);
    expect(result["mcp-session-id"]).toBe("session-1234");
    expect(result["content-type"]).toBe("application/json");
    expect(result["www-authenticate"]).toBe(headers["www-authenticate"]);
    expect(result.location).toBe(`https://client.example/cb?code=${REDACTED}&state=s1`);
    expect(result).not.toHaveProperty("x-missing");
  });

  it("redacts a schemeless Authorization value entirely", () => {
    expect(redactHeaders({ Authorization: CANARY }).Authorization).toBe(REDACTED);
  });

  it("redacts the secret parameters of every URL and name=value pair in any header value kept, and leaves the rest byte for byte", () => {
    const result = redactHeaders({
      refresh: `0;url=https://c.example/cb?code=${CANARY}&state=s1`,
      link: `<https://c.example/cb?state=s1&code=${CANARY}>; rel="next", </docs#access_token=${CANARY}>; rel="help"`,
      "www-authenticate": `Bearer error="invalid_request", error_uri="https://as.example/err?code=${CANARY}&lang=en"`,
      "x-plain": "a=b; c?d, e#f",
      "x-debug": `issued access_token=${CANARY} expires_in=3600`,
      "server-timing": "auth;dur=3, db;desc=\"token lookup\"",
      "content-security-policy": "default-src 'self'; report-uri /csp?site=1",
    });
    expectGone(result, CANARY);
    expect(result.refresh).toBe(`0;url=https://c.example/cb?code=${REDACTED}&state=s1`);
    expect(result.link).toBe(`<https://c.example/cb?state=s1&code=${REDACTED}>; rel="next", </docs#access_token=${REDACTED}>; rel="help"`);
    expect(result["www-authenticate"]).toBe(`Bearer error="invalid_request", error_uri="https://as.example/err?code=${REDACTED}&lang=en"`);
    expect(result["x-plain"]).toBe("a=b; c?d, e#f");
    expect(result["x-debug"]).toBe(`issued access_token=${REDACTED} expires_in=3600`);
    expect(result["server-timing"]).toBe('auth;dur=3, db;desc="token lookup"');
    expect(result["content-security-policy"]).toBe("default-src 'self'; report-uri /csp?site=1");
  });
});

describe("redactBody", () => {
  it("redacts a token response and a token request", () => {
    const response = {
      access_token: JWT_CANARY,
      token_type: "Bearer",
      expires_in: 3600,
      refresh_token: CANARY,
      id_token: JWT_CANARY,
      scope: "mcp",
    };
    const result = redactBody(response) as Record<string, unknown>;
    expectGone(result, CANARY, JWT_CANARY);
    expect(result).toEqual({ ...response, access_token: REDACTED, refresh_token: REDACTED, id_token: REDACTED });
    expectGone(redactBody({ client_secret: CANARY, code_verifier: CANARY, clientAssertion: CANARY }), CANARY);
  });

  it("matches names case-insensitively and in camelCase, strings only", () => {
    const result = redactBody({
      Password: CANARY,
      apiKey: CANARY,
      "API-KEY": CANARY,
      Secret: CANARY,
      token: { nested: { accessToken: CANARY } },
      other: [{ TOKEN: CANARY }],
    });
    expectGone(result, CANARY);
    expect(result).toMatchObject({ token: { nested: { accessToken: REDACTED } } });
  });

  it("keeps JSON-RPC error codes, progress tokens and ordinary fields", () => {
    const message = {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32602, message: "bad", data: { code: "E_BAD" } },
      params: { _meta: { progressToken: "p-1" }, name: "echo" },
    };
    expect(redactBody(message)).toEqual(message);
  });

  it("does not mutate its input and keeps member order", () => {
    const input = { z: 1, password: CANARY, a: { token: CANARY } };
    const snapshot = structuredClone(input);
    const result = redactBody(input);
    expect(input).toEqual(snapshot);
    expect(Object.keys(result as object)).toEqual(["z", "password", "a"]);
  });

  it("copies __proto__ members as data, not as a prototype", () => {
    const input = JSON.parse(`{"__proto__":{"token":"${CANARY}"}}`) as unknown;
    const result = redactBody(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(JSON.stringify(result)).toBe(`{"__proto__":{"token":"${REDACTED}"}}`);
  });

  it("survives 100,000-deep nesting and cycles", () => {
    let deep: unknown = { token: CANARY };
    for (let level = 0; level < 100_000; level++) deep = level % 2 ? { a: deep } : [deep];
    let copy = redactBody(deep);
    for (let level = 0; level < 100_000; level++) {
      copy = Array.isArray(copy) ? copy[0] : (copy as { a: unknown }).a;
    }
    expect(copy).toEqual({ token: REDACTED });

    const cyclic: Record<string, unknown> = { password: CANARY };
    cyclic.self = cyclic;
    expect(redactBody(cyclic)).toEqual({ password: REDACTED, self: "[circular]" });
  });

  it("passes primitives through", () => {
    expect(redactBody("x")).toBe("x");
    expect(redactBody(null)).toBeNull();
    expect(redactBody(undefined)).toBeUndefined();
  });
});

describe("redactUrlQuery and redactFormBody", () => {
  it("redacts secret query and fragment parameters, keeps the session id", () => {
    const url = `/message?sessionId=abc-123&access_token=${CANARY}&x=1#access_token=${CANARY}&token_type=bearer`;
    const result = redactUrlQuery(url);
    expectGone(result, CANARY);
    expect(result).toBe(
      `/message?sessionId=abc-123&access_token=${REDACTED}&x=1#access_token=${REDACTED}&token_type=bearer`,
    );
    expect(redactUrlQuery(`/mcp?api%5Fkey=${CANARY}&key=${CANARY}`)).toBe(
      `/mcp?api%5Fkey=${REDACTED}&key=${REDACTED}`,
    );
    expect(redactUrlQuery("/mcp")).toBe("/mcp");
    expect(redactUrlQuery("/mcp?flag&%E0%A4%A=1")).toBe("/mcp?flag&%E0%A4%A=1");
  });

  it("redacts under every separator a server may split on: `;` as well as `&`, and path parameters", () => {
    expect(redactUrlQuery(`/mcp/?v=1;api_key=${CANARY}`)).toBe(`/mcp/?v=1;api_key=${REDACTED}`);
    // A `;` reader reads the value to the next `;`; an `&` reader the value of `api_key` to the next `&`.
    expect(redactUrlQuery(`/mcp?v=1;api_key=${CANARY}&x=2;y=3`)).toBe(`/mcp?v=1;api_key=${REDACTED};y=3`);
    // A raw `;` inside a value: hidden whole (to a `;` reader, Password's value runs on past the `&`).
    expect(redactUrlQuery(`/mcp?dsn=Server=x;Password=${CANARY}&z=1`)).toBe(`/mcp?dsn=${REDACTED}`);
    expect(redactUrlQuery(`/mcp;api_key=${CANARY};v=1/x?a=1`)).toBe(`/mcp;api_key=${REDACTED};v=1/x?a=1`);
    expect(redactUrlQuery(`/mcp?a=1#x=1;access_token=${CANARY}`)).toBe(`/mcp?a=1#x=1;access_token=${REDACTED}`);
    expect(redactFormBody(`grant_type=password;password=${CANARY}`)).toBe(`grant_type=password;password=${REDACTED}`);
    expect(redactUrlQuery("/mcp?a=1;b=2&c;d")).toBe("/mcp?a=1;b=2&c;d");
  });

  it("property: whatever separators a query mixes, no value sent under a secret name survives, and queryCredentials finds it", () => {
    const name = fc.constantFrom("api_key", "access_token", "hapikey", "pass", "dsn", "appid", "v", "page", "sessionId", "q", "api%5Fkey");
    const value = fc.stringMatching(/^[A-Za-z0-9]{8,16}$/);
    const secretNames = new Set(["api_key", "access_token", "hapikey", "pass", "dsn", "appid", "api%5Fkey"]);
    fc.assert(
      fc.property(fc.array(fc.tuple(name, value, fc.constantFrom("&", ";")), { minLength: 1, maxLength: 8 }), fc.boolean(), (pairs, inPath) => {
        // A value that is also (part of) another parameter's value stays readable there: not what this checks.
        fc.pre(pairs.every(([, v], i) => pairs.every(([, w], j) => i === j || !w.includes(v))));
        const query = pairs.map(([n, v], i) => `${i === 0 ? "" : pairs[i]![2]}${n}=${v}`).join("");
        const url = inPath ? `/mcp;${query.replaceAll("&", ";")}?x=1` : `/mcp?${query}#${query}`;
        const out = redactUrlQuery(url);
        const found = queryCredentials(url);
        for (const [n, v] of pairs) {
          if (!secretNames.has(n)) continue;
          expect(out).not.toContain(v);
          expect(found).toContain(v);
        }
        // The ordinary case, `&` alone, keeps every other value readable.
        if (!inPath && pairs.every(([, , sep]) => sep === "&")) {
          for (const [n, v] of pairs) if (!secretNames.has(n) && !pairs.some(([m, w]) => secretNames.has(m) && w === v)) expect(out).toContain(`${n}=${v}`);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("redacts an OAuth token request", () => {
    const body = `grant_type=authorization_code&code=${CANARY}&code_verifier=${CANARY}&client_id=app&client_secret=${CANARY}&redirect_uri=http%3A%2F%2Flocalhost`;
    const result = redactFormBody(body);
    expectGone(result, CANARY);
    expect(result).toContain("grant_type=authorization_code");
    expect(result).toContain("client_id=app");
    expect(result).toContain(`code_verifier=${REDACTED}`);
  });
});

describe("redactText", () => {
  it("redacts bearer and basic credentials, keeping the scheme", () => {
    const result = redactText(`upstream said 401 for Authorization: Bearer ${CANARY} (basic ${CANARY}==)`);
    expectGone(result, CANARY);
    expect(result).toBe(`upstream said 401 for Authorization: Bearer ${REDACTED} (basic ${REDACTED})`);
  });

  it("redacts JWTs anywhere", () => {
    const result = redactText(`token ${JWT_CANARY} expired.`);
    expectGone(result, JWT_CANARY, "eyJzdWIiOiJjYW5hcnkifQ");
  });

  it("redacts a secret pair after a `;` in a URL quoted in free text", () => {
    const result = redactText(`GET https://mcp.example/mcp/?v=1;api_key=${CANARY}&x=2 failed`);
    expectGone(result, CANARY);
    expect(result).toBe(`GET https://mcp.example/mcp/?v=1;api_key=${REDACTED}&x=2 failed`);
  });

  it("redacts secret pairs in URLs and quoted JSON", () => {
    const result = redactText(
      `GET https://as.example/cb?access_token=${CANARY}&state=1 failed: {"refresh_token": "${CANARY}", "code": -32600}`,
    );
    expectGone(result, CANARY);
    expect(result).toContain("state=1");
    expect(result).toContain('"code": -32600');
  });

  it("leaves challenge parameters readable", () => {
    const challenge = 'Bearer error="invalid_token", resource_metadata="https://x/.well-known/oauth-protected-resource"';
    expect(redactText(challenge)).toBe(challenge);
    expect(redactText('Basic realm="mcp"')).toBe('Basic realm="mcp"');
  });
});

describe("redactUserinfo", () => {
  it("hides user:password in every URL of a text, and leaves URLs without it alone", () => {
    expect(redactUserinfo("proxy at http://alice:s3cret@127.0.0.1:8080 and https://h.example/p?q=a@b")).toBe(
      `proxy at http://${REDACTED}@127.0.0.1:8080 and https://h.example/p?q=a@b`,
    );
    expect(redactUserinfo("socks5://token@h:1")).toBe(`socks5://${REDACTED}@h:1`);
    expect(redactUserinfo("http://127.0.0.1:8080")).toBe("http://127.0.0.1:8080");
  });
});
