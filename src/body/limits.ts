/**
 * The decoders' default limits, apart from the decoders: the command line shows them as option defaults,
 * and parsing it must not load the decoders (zlib and all).
 */

/** Largest body or SSE event decoded by default (`--max-inspect-bytes`); larger ones are forwarded, not inspected. */
export const DEFAULT_MAX_INSPECT_BYTES = 8 * 1024 * 1024;
export const DEFAULT_MAX_STREAM_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_MAX_JSON_DEPTH = 256;
