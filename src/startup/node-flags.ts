/**
 * The Node options `wrap` writes before the main script of each launch it sets up (client-configs/). A young
 * generation of at most 1 MiB per semi-space: a wrapper's garbage is small and short-lived (one line, one
 * record at a time), and V8's default lets the young generation grow to 16 MiB per semi-space, some 10 MiB of
 * resident memory per wrapped server for nothing (docs/performance.md, "Start-up"). Only a command line sets
 * it: V8 sizes its heap before any of our code runs.
 */
export const WRAPPED_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=1"];
