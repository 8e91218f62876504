// Run by `npm run build` after tsc: what makes a launch of the CLI cheap (docs/performance.md, "Start-up").
//  1. dist/config/policy.json: the shipped config/policy.yaml, checked once here (src/policy/checked-policy.ts).
//  2. dist/cli/main.js: the CLI bundled with esbuild, one file per command's code (split at each dynamic
//     import(), so a command loads only what it uses), in place of tsc's main.js. Resolving and reading some
//     four hundred module files was most of a `stdio` launch's start-up. The modules tsc wrote stay beside it
//     for the preload (dist/preload/) and for code that imports them.
import { build } from "esbuild";
import { mkdirSync, readFileSync, rmSync, writeFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const dist = path.join(root, "dist");

const { parsePolicy } = await import(pathToFileURL(path.join(dist, "policy", "load-config.js")).href);
const shipped = path.join(root, "config", "policy.yaml");
const text = readFileSync(shipped, "utf8");
mkdirSync(path.join(dist, "config"), { recursive: true });
writeFileSync(path.join(dist, "config", "policy.json"), `${JSON.stringify({ text, config: parsePolicy(text, shipped) })}\n`);

const cli = path.join(dist, "cli");
// Chunks of an earlier build: their names change with their contents.
for (const f of readdirSync(cli)) if (/^(stdio-)?chunk-/.test(f)) rmSync(path.join(cli, f));
const common = {
  absWorkingDir: root,
  outdir: cli,
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
};
// Node's own modules taken with require() (the banner's), never as ES modules: an ES module namespace is
// built from every export, and reading them runs Node's lazy getters (node:fs loads fs/promises, readline and
// streams; node:process its report; node:util its differ, argument parser and worker threads), some 30
// internal modules a launch never uses. A CommonJS stand-in would not do: esbuild's interop copies every
// export's descriptor, which runs the same getters. So each importing file gets an ES module of its own that
// takes just the names it imports (read from its import statements), which also keeps it in the importer's
// chunk. An import this reading does not follow (a namespace import) gets the whole module, as before.
const importedNames = new Map();
function namesImported(file, specifier) {
  let text = importedNames.get(file);
  if (text === undefined) importedNames.set(file, (text = readFileSync(file, "utf8")));
  const quoted = specifier.replace(/[/]/g, "\\/");
  const statement = new RegExp(`\\b(import|export)\\s+([^;'"]*?)\\s*from\\s*(["'])${quoted}\\3`, "g");
  const names = new Set();
  for (const [, keyword, clause] of text.matchAll(statement)) {
    if (/^type\b/.test(clause)) continue; // erased with the types
    const braces = /\{([^}]*)\}/.exec(clause);
    const outside = clause.replace(/\{[^}]*\}/, "").replace(/,/g, " ").trim();
    if (keyword === "export" || outside.includes("*")) return null;
    if (outside !== "") names.add("default");
    for (const part of braces?.[1].split(",") ?? []) {
      const name = part.trim().split(/\s+as\s+/)[0];
      if (name && !/^type\s/.test(name)) names.add(name);
    }
  }
  return [...names];
}
// A getter (fs.promises loads fs/promises, readline and streams) is read where it is used, not at load: a
// file importing one gets the whole module.
const require = createRequire(import.meta.url);
const lazyExport = (specifier, name) => typeof Object.getOwnPropertyDescriptor(require(specifier), name)?.get === "function";
const builtinsByRequire = {
  name: "builtins-by-require",
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) => {
      if (args.kind !== "import-statement") return undefined;
      const names = namesImported(args.importer, args.path);
      return names && !names.some((n) => lazyExport(args.path, n)) ? { path: `${args.path}?${path.relative(root, args.importer)}`, namespace: "builtin-names", pluginData: { names } } : { path: args.path, namespace: "builtin" };
    });
    b.onLoad({ filter: /.*/, namespace: "builtin" }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: "js" }));
    b.onLoad({ filter: /.*/, namespace: "builtin-names" }, (args) => {
      const named = args.pluginData.names.filter((n) => n !== "default");
      const specifier = args.path.slice(0, args.path.indexOf("?"));
      return {
        contents: [`const m = require(${JSON.stringify(specifier)});`, "export default m;", ...(named.length > 0 ? [`export const { ${named.join(", ")} } = m;`] : [])].join("\n"),
        loader: "js",
      };
    });
  },
};
// pino loads at its own load the writer it makes when it is given none (sonic-boom, which loads node:assert)
// and its worker-thread transports (thread-stream, node:worker_threads' machinery); the stdio bundle gives pino
// its own writer and no transport. There each is loaded at its first use: the module stands in for its class or
// function (`new`, a call, `instanceof`: nothing is an instance of a class not loaded yet).
const DEFERRED = /[\\/]node_modules[\\/](sonic-boom[\\/]index|pino[\\/]lib[\\/]transport)\.js$/;
const deferredRequires = {
  name: "deferred-requires",
  setup(b) {
    b.onLoad({ filter: DEFERRED }, (args) =>
      args.suffix === "?now"
        ? undefined
        : {
            contents: [
              "let loaded;",
              `const load = () => (loaded ??= require(${JSON.stringify(`./${path.basename(args.path)}?now`)}));`,
              "function deferred(...a) { return new.target ? new (load())(...a) : load().apply(this, a); }",
              "Object.defineProperty(deferred, Symbol.hasInstance, { value: (x) => loaded !== undefined && x instanceof loaded });",
              "module.exports = deferred;",
            ].join("\n"),
            loader: "js",
            resolveDir: path.dirname(args.path),
          },
    );
  },
};
// main.js loads the stdio command's bundle (3.) by its file names.
const stdioEntry = { name: "stdio-entry", setup: (b) => b.onResolve({ filter: /^\.\/stdio-(main|early)\.js$/ }, (args) => (args.importer.endsWith(path.join("cli", "main.ts")) ? { path: args.path, external: true } : undefined)) };
await build({
  ...common,
  // The demo's stdio server is started by file name, next to the code that starts it (demo/run-demo.ts).
  entryPoints: { main: "src/cli/main.ts", "demo-server": "src/demo/demo-server.ts" },
  // Chunks sit beside main.js, so code that finds the package two folders up (util/package-info.ts) still does.
  chunkNames: "chunk-[hash]",
  plugins: [stdioEntry, builtinsByRequire],
});
//  3. dist/cli/stdio-main.js: `stdio`, what clients launch once per server, bundled on its own (in place of
//     tsc's file of that name): split over all commands, its code was some 35 chunks, and each ES module
//     costs its own resolution, read and link. On its own it is a few: what starts the server before anything
//     else (stdio-early.js, cli/stdio-early.ts), the command line, then the rest, loaded while the server boots
//     (cli/stdio-launch.ts).
await build({ ...common, entryPoints: { "stdio-main": "src/cli/stdio-main.ts", "stdio-early": "src/cli/stdio-early.ts" }, chunkNames: "stdio-chunk-[hash]", plugins: [builtinsByRequire, deferredRequires] });
