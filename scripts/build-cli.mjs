// Run by `npm run build` after tsc: what makes a launch of the CLI cheap (docs/performance.md, "Start-up").
//  1. dist/config/policy.json: the shipped config/policy.yaml, checked once here (src/policy/checked-policy.ts).
//  2. dist/cli/main.js: the CLI bundled with esbuild, one file per command's code (split at each dynamic
//     import(), so a command loads only what it uses), in place of tsc's main.js. Resolving and reading some
//     four hundred module files was most of a `stdio` launch's start-up. The modules tsc wrote stay beside it
//     for the preload (dist/preload/) and for code that imports them.
import { build } from "esbuild";
import { mkdirSync, readFileSync, rmSync, writeFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const dist = path.join(root, "dist");

const { parsePolicy } = await import(pathToFileURL(path.join(dist, "policy", "load-config.js")).href);
const { policyTextHash } = await import(pathToFileURL(path.join(dist, "policy", "checked-policy.js")).href);
const shipped = path.join(root, "config", "policy.yaml");
const text = readFileSync(shipped, "utf8");
mkdirSync(path.join(dist, "config"), { recursive: true });
writeFileSync(path.join(dist, "config", "policy.json"), `${JSON.stringify({ sha256: policyTextHash(text), config: parsePolicy(text, shipped) })}\n`);

const cli = path.join(dist, "cli");
// Chunks of an earlier build: their names change with their contents.
for (const f of readdirSync(cli)) if (f.startsWith("chunk-")) rmSync(path.join(cli, f));
await build({
  absWorkingDir: root,
  // The demo's stdio server is started by file name, next to the code that starts it (demo/run-demo.ts).
  entryPoints: { main: "src/cli/main.ts", "demo-server": "src/demo/demo-server.ts" },
  outdir: cli,
  // Chunks sit beside main.js, so code that finds the package two folders up (cli/package-info.ts) still does.
  chunkNames: "chunk-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  // Bundled CommonJS dependencies call require() and read __filename: give every chunk both.
  banner: {
    js: [
      'import { createRequire as __wiretapCreateRequire } from "node:module";',
      'import { fileURLToPath as __wiretapFileUrlToPath } from "node:url";',
      'import { dirname as __wiretapDirname } from "node:path";',
      "const require = __wiretapCreateRequire(import.meta.url);",
      "const __filename = __wiretapFileUrlToPath(import.meta.url);",
      "const __dirname = __wiretapDirname(__filename);",
    ].join(" "),
  },
  // jsonc-parser's main file is a UMD wrapper whose require() calls esbuild cannot follow: take its ES modules.
  alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js" },
  legalComments: "none",
  logLevel: "warning",
});
