import { existsSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";

/** The bundled front end (`npm run build` writes it to dist/ui/assets/). */
export interface UiAssets {
  js: string;
  css: string;
}

const CANDIDATES = [
  // dist/ui/server/assets.js → dist/ui/assets/
  new URL("../assets/", import.meta.url),
  // src/ui/server/assets.ts run from source (tests) → dist/ui/assets/
  new URL("../../../dist/ui/assets/", import.meta.url),
  // the bundled CLI (dist/cli/chunk-….js, scripts/build-cli.mjs) → dist/ui/assets/
  new URL("../ui/assets/", import.meta.url),
];

export class UiAssetsMissing extends Error {}

let cached: UiAssets | null = null;

export function loadAssets(): UiAssets {
  if (cached) return cached;
  for (const dir of CANDIDATES) {
    const js = fileURLToPath(new URL("app.js", dir));
    if (!existsSync(js)) continue;
    cached = { js: readFileSync(js, "utf8"), css: readFileSync(fileURLToPath(new URL("app.css", dir)), "utf8") };
    return cached;
  }
  throw new UiAssetsMissing("the web UI bundle is missing (dist/ui/assets/app.js): run `npm run build`");
}

/** The policy served with every UI response: scripts and styles from this server only, no other URL. */
export const SERVED_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The page a running server serves. `actions`: the page may act (release held messages, replay requests): it
 * carries the token and its own nonce, which every action sends back in headers (see action-guard.ts).
 */
export function servedPage(actions?: { token: string; nonce: string; replay?: boolean }): string {
  const meta = actions
    ? `<meta name="wiretap-token" content="${escapeHtml(actions.token)}"><meta name="wiretap-nonce" content="${escapeHtml(actions.nonce)}">${actions.replay ? '<meta name="wiretap-replay" content="1">' : ""}`
    : "";
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">${meta}<meta name="viewport" content="width=device-width">` +
    '<title>mcp-wiretap</title><link rel="stylesheet" href="/app.css"></head>' +
    '<body><div id="app"></div><script src="/app.js"></script></body></html>'
  );
}

const sha256 = (text: string): string => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

/**
 * One self-contained page: the bundle inline (allowed by its hash, nothing else may run), the records as
 * a JSON data block (and their token estimates, when given), and a policy that forbids every network request.
 */
export function exportedPage(lines: readonly string[], title: string, tokens?: unknown): string {
  const { js, css } = loadAssets();
  // Inside a data block only `</script` could end it early; `<` escaped as \u003c is the same JSON.
  const data = `[${lines.join(",")}]`.replace(/</g, "\\u003c");
  const tokenBlock = tokens === undefined ? "" : `<script type="application/json" id="wiretap-tokens">${JSON.stringify(tokens).replace(/</g, "\\u003c")}</script>`;
  const safeJs = js.replace(/<\/script/gi, "<\\/script");
  const csp = `default-src 'none'; script-src ${sha256(safeJs)}; style-src ${sha256(css)}; img-src data:; base-uri 'none'; form-action 'none'`;
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}">` +
    `<meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title><style>${css}</style></head>` +
    `<body><div id="app"></div><script type="application/json" id="wiretap-data">${data}</script>${tokenBlock}` +
    `<script>${safeJs}</script></body></html>`
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
