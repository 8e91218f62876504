/**
 * The decoders' default limits, apart from the decoders: the command line shows them as option defaults,
 * and parsing it must not load the decoders (zlib and all).
 */

/** Largest body or SSE event decoded by default (`--max-inspect-bytes`); larger ones are forwarded, not inspected. */
export const DEFAULT_MAX_INSPECT_BYTES = 8 * 1024 * 1024;
export const DEFAULT_MAX_STREAM_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_MAX_JSON_DEPTH = 256;
/**
 * Most values in one JSON text that is parsed, member names included (all levels together; as many strings
 * as a content scan reads before it stops): every pass over a message (parse, records, digests) costs per
 * value, and 600,000 members in 7 MB held the event loop for seconds.
 */
export const MAX_JSON_VALUES = 200_000;
