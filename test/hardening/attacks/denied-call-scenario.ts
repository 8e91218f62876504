/**
 * The enforce-mode scenario the request-reading attacks share (not a test file): a policy denying the tool
 * `delete_everything`, a call of it, and a POST that must not reach the upstream.
 */
import { expect } from "vitest";
import type { WireResponse } from "../../policy/wire-client.js";
import { wireScenario, type WireScenario } from "../../policy/wire-scenario.js";

export const DENY_DELETE = `mode: enforce\nrules:\n  - { name: no-delete, action: deny, match: { tool: delete_everything } }\n`;

/** A call of the denied tool, with id `id`. */
export const deniedCall = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"delete_everything","arguments":{}}}`;

/** Registers the suite's hooks: the scenario is filled in once `beforeAll` has run. */
export function denyDeleteScenario(): WireScenario {
  return wireScenario(DENY_DELETE);
}

/** POSTs `body` through the proxy and asserts the upstream got nothing; returns the proxy's answer. */
export async function postNotForwarded(s: WireScenario, body: string | Buffer, headers?: Record<string, string>): Promise<WireResponse> {
  const before = s.up.requests.length;
  const res = await s.client.post(s.url, body, headers);
  expect(s.up.requests.length, `forwarded (status ${res.status}: ${res.text})`).toBe(before);
  return res;
}

/** True when the proxy recorded a denied client message with id `id` (null: a body it found no id in). */
export async function deniedRecorded(s: WireScenario, id: number | null): Promise<boolean> {
  const records = await s.proxy.records();
  return records.some((r) => r.direction === "client_to_server" && r.id === id && (r.decision as { action?: string } | undefined)?.action === "deny");
}
