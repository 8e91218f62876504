#!/usr/bin/env node
/**
 * The `mcp-wiretap` executable. It checks the Node.js version before anything else is loaded: the rest of
 * the program (and its dependencies) uses APIs of Node 22.12+, and on an older Node the user would see a
 * stack trace from deep inside instead of what to do. Keep this module free of static imports.
 */
const MINIMUM = { major: 22, minor: 12 };

function isSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major > MINIMUM.major || (major === MINIMUM.major && minor >= MINIMUM.minor);
}

const found = process.versions.node;
if (!isSupported(found)) {
  process.stderr.write(
    `mcp-wiretap needs Node.js ≥ ${MINIMUM.major}.${MINIMUM.minor} (found ${found}).\n` +
      `  Install Node.js 22 or 24 (LTS) from https://nodejs.org, or with nvm: nvm install 22 && nvm use 22\n` +
      `  then run mcp-wiretap again (\`node --version\` shows which Node is first on your PATH).\n`,
  );
  process.exit(1);
}

// `mcp` is a long-lived server launched by a client: it starts again with its heap settings first (nothing is loaded yet).
if (process.argv[2] === "mcp") {
  const [{ relaunchWith }, { MCP_NODE_FLAGS }] = await Promise.all([import("../startup/relaunch.js"), import("../startup/node-flags.js")]);
  relaunchWith(MCP_NODE_FLAGS);
}
// `stdio` is what clients launch, once per server: the server they wait for starts before the rest of the
// program is loaded, and the stdio bundle's own code keeps the compile cache (no file of the other bundle loaded).
const early = process.argv[2] === "stdio" ? await import("./stdio-early.js") : null;
early?.startServerEarly(process.argv);
// Compiled modules kept between launches (before the rest is loaded: only modules loaded after it are cached).
await (early ?? (await import("../startup/compile-cache.js"))).enableCompileCache();
// GC tuning, chosen here once before anything runs (see proxy/reclaim-buffers.ts and docs/performance.md).
// `stdio` forwards no HTTP body: it does without (exposing the collector costs a V8 context, some 3 MiB).
if (process.argv[2] !== "stdio") (await import("../proxy/reclaim-buffers.js")).reclaimForwardedBuffers();
// `stdio` is what clients launch, once per server: it loads its own command alone.
const { main } = process.argv[2] === "stdio" ? await import("./stdio-main.js") : await import("./program.js");
await main(process.argv);
