/**
 * The app HTML reader: which origins each shape of HTML reaches, by the csp list that must declare them,
 * and how a csp entry is read (as CSP reads a source list). Independent expectations, written by hand.
 */
import { describe, expect, it } from "vitest";
import { broadEntry, declares, originsOf } from "../../src/apps/app-origins.js";

describe("originsOf", () => {
  it("finds loads, connections, frames and base URIs; skips links, relative URLs and other schemes", () => {
    const html = `<base href="https://base.example/"><link rel="stylesheet" href="//styles.example/a.css">
      <img SRC='https://img.example:8443/x.png'><iframe src="https://frame.example/"></iframe>
      <a href="https://link.example/">not loaded</a><script src="/local.js"></script><img src="data:image/png;base64,AA">
      <style>@import "https://font.example/f.css"; div { background: url(https://bg.example/b.png) }</style>
      <script type="module">import x from "https://esm.example/m.js";
        fetch('https://api.example/v1'); new WebSocket("wss://ws.example/s"); navigator.sendBeacon("https://beacon.example/");
        const r = new XMLHttpRequest(); r.open("POST", "https://xhr.example/up");</script>
      <form action="https://post.example/submit"></form>`;
    expect(originsOf(html).map((o) => `${o.use} ${o.origin} ${o.how}`).sort()).toEqual(
      [
        "baseUriDomains https://base.example <base href>",
        "connectDomains https://api.example fetch()",
        "connectDomains https://beacon.example sendBeacon()",
        "connectDomains https://post.example <form action>",
        "connectDomains https://xhr.example open()",
        "connectDomains wss://ws.example WebSocket()",
        "frameDomains https://frame.example <iframe src>",
        "resourceDomains https://bg.example CSS url()/@import",
        "resourceDomains https://esm.example import",
        "resourceDomains https://font.example CSS url()/@import",
        "resourceDomains https://img.example:8443 <img src>",
        "resourceDomains https://styles.example <link href>",
      ].sort(),
    );
  });

  it("sees the spellings a browser loads as well: padded values, backslashes for slashes, srcset candidates", () => {
    const html = `<script src=" https://pad.example/x.js "></script><img src="https:\\\\back.example/i.png">
      <img src=x.png srcset="small.png 1x, https://set.example/b.png 2x"><link rel="preload" as="image" imagesrcset=' https://preload.example/p.png 480w'>
      <iframe src='\\\\frame.example/'></iframe>`;
    expect(originsOf(html).map((o) => `${o.use} ${o.origin}`).sort()).toEqual(
      ["frameDomains https://frame.example", "resourceDomains https://back.example", "resourceDomains https://pad.example", "resourceDomains https://preload.example", "resourceDomains https://set.example"].sort(),
    );
  });

  it("a hostile page of unclosed tags and half URLs is read in linear time (no stall) and yields nothing false", () => {
    const html = "<img ".repeat(200_000) + "url(//".repeat(100_000) + 'fetch("'.repeat(100_000);
    const started = process.hrtime.bigint();
    const found = originsOf(html);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    expect(found.length).toBeLessThanOrEqual(100);
    // Quadratic scanning of this input takes minutes; linear takes well under a second even on a busy machine.
    expect(ms).toBeLessThan(5_000);
  });
});

describe("csp entries", () => {
  it.each([
    ["https://api.example", "https://api.example", true],
    ["https://api.example", "wss://api.example", true],
    ["https://api.example", "http://api.example", false],
    ["https://*.example", "https://a.b.example", true],
    ["https://*.example", "https://example", false],
    ["api.example", "https://api.example", true],
    ["https://api.example:8443", "https://api.example:8443", true],
    ["https://api.example:8443", "https://api.example", false],
    ["https://api.example", "https://api.example.evil", false],
  ])("%s declares %s: %s", (entry, origin, expected) => {
    expect(declares(entry, origin)).toBe(expected);
  });

  it("names entries broader than a list of origins", () => {
    for (const entry of ["*", "https:", "data:", "https://*", "http://plain.example", "ws://x.example", "'unsafe-eval'"]) expect(broadEntry(entry), entry).toBeDefined();
    for (const entry of ["https://api.example", "https://*.example", "wss://ws.example"]) expect(broadEntry(entry), entry).toBeUndefined();
  });
});
