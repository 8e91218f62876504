/**
 * The Node options `wrap` writes before the main script of each launch it sets up (client-configs/). Only a
 * command line sets them: V8 sizes its heap and picks its compilers before any of our code runs. Measured in
 * docs/performance.md ("stdio start-up"), each some 8–10 MiB of resident memory per wrapped server:
 *  - a young generation of at most 1 MiB per semi-space: a wrapper's garbage is small and short-lived (one
 *    line, one record at a time), and V8's default lets it grow to 16 MiB per semi-space;
 *  - V8's interpreter and baseline compiler only (no Maglev or TurboFan): the optimizing tiers' code and
 *    their compiler threads' memory buy a relay that waits on pipes nothing it needs. Regular expressions
 *    are still compiled to machine code (a separate compiler), and JSON is parsed natively.
 */
export const WRAPPED_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=1", "--max-opt=1"];

/**
 * `mcp-wiretap mcp` (applied by src/startup/relaunch.ts), measured in docs/performance.md ("MCP server search"):
 *  - a young generation of at most 4 MiB per semi-space: reading a log, every line is parsed and dropped but
 *    for a small head, and V8's default let the young generation grow to 64 MiB per semi-space meanwhile,
 *    and keep it (over a 63 MiB log, twice what the server holds); 1 MiB saved a few MiB more but read the
 *    log half as fast;
 *  - an old generation collected once it grows by half over what was live (V8's default lets it double):
 *    the call list and each whole-log tool call's garbage otherwise took RSS to 2× the log's size.
 */
export const MCP_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=4", "--heap-growing-percent=50"];
