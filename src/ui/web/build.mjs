// Bundles the web UI (src/ui/web/main.tsx) into dist/ui/assets/app.js and app.css; run by `npm run build`.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));

// The tail filters are shared with the CLI; the only Node API they reach is net.isIPv6 (host:port parsing).
const nodeNetShim = {
  name: "node-net-shim",
  setup(b) {
    b.onResolve({ filter: /^node:net$/ }, () => ({ path: "node:net", namespace: "shim" }));
    b.onLoad({ filter: /.*/, namespace: "shim" }, () => ({
      contents: "export function isIPv6(s) { return typeof s === 'string' && s.includes(':') && /^[0-9a-f:.]+$/i.test(s); }",
      loader: "js",
    }));
  },
};

await build({
  absWorkingDir: root,
  entryPoints: { app: "src/ui/web/main.tsx" },
  outdir: "dist/ui/assets",
  bundle: true,
  minify: true,
  format: "iife",
  platform: "browser",
  target: ["chrome110", "firefox115", "safari16"],
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  plugins: [nodeNetShim],
  logLevel: "warning",
});
