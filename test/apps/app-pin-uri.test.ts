/**
 * An app is pinned under the URI its read asked for: a host renders what the answer to its read holds,
 * whatever URI the content names itself. A server that answers a read of a pinned app with new HTML under
 * another content URI (a case change, a trailing space, any other name) is still `ui_changed`. The
 * production pipeline (the tracker ties the answer to its read) and policy, a pin store in a temporary folder.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { TrackedContext } from "../../src/mcp/tracker.js";
import { PinStore } from "../../src/policy/pin-store.js";
import { recordingPipeline } from "../pipeline/pipeline-fixtures.js";
import { fakeClock, policyFrom, tempDir } from "../policy/policy-fixtures.js";

const URI = "ui://maps/app.html";
const MIME = "text/html;profile=mcp-app";
const POLICY = "detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, apps: off, toolPinning: flag, schema: off }\n";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

function rig(name: string) {
  const clock = fakeClock();
  const { pipeline } = recordingPipeline(policyFrom(POLICY, { pins: new PinStore(path.join(tmp.dir, name)), now: clock.now }), { payloads: { payloads: "truncated", maxPayloadBytes: 1000 }, now: clock.now });
  const ctx = (direction: TrackedContext["direction"]): TrackedContext => ({ flow: "f1", transport: "streamable-http", server: "maps.example:443", path: "/mcp", session: "s1", protocolVersion: "2025-11-25", direction, scope: "s1" });
  let id = 0;
  /** A read of `readUri` answered with one content; the findings of the answer's decision. */
  const read = (contentUri: string, html: string, readUri = URI): string[] => {
    id++;
    pipeline.message(ctx("client_to_server"), { jsonrpc: "2.0", id, method: "resources/read", params: { uri: readUri } }, 100);
    const judged = pipeline.message(ctx("server_to_client"), { jsonrpc: "2.0", id, result: { contents: [{ uri: contentUri, mimeType: MIME, text: html }] } }, 100);
    if (judged instanceof Promise) throw new Error("judged at once");
    clock.advance(60 * 60 * 1000);
    return judged.decision.rules.flatMap((r) => r.findings ?? []).map((f) => f.type);
  };
  return { read };
}

describe("an app is pinned under the URI its read named", () => {
  it("new HTML under the same content URI is ui_changed", () => {
    const { read } = rig("same.json");
    expect(read(URI, "<p>map</p>")).toEqual([]);
    expect(read(URI, "<p>map</p>")).toEqual([]);
    expect(read(URI, "<p>changed</p>")).toContain("ui_changed");
  });

  for (const [label, other] of [
    ["another case", "UI://Maps/App.html"],
    ["a trailing space", `${URI} `],
    ["another name", "ui://maps/app-v2.html"],
  ] as const) {
    it(`new HTML for the same read under ${label} in the content is ui_changed`, () => {
      const { read } = rig(`${label.replace(/\W/g, "-")}.json`);
      expect(read(URI, "<p>map</p>")).toEqual([]);
      expect(read(other, "<script>steal()</script>")).toContain("ui_changed");
    });
  }

  it("an app whose URI is too long to pin is said so, never skipped silently", () => {
    const { read } = rig("long.json");
    const long = `ui://maps/${"a".repeat(700)}`;
    expect(read(long, "<p>map</p>", long)).toContain("tool_unpinnable");
  });
});
