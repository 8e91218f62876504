// Apart from payload.ts (and its hashing): the command line shows these as option defaults.
/**
 * How much of a JSON-RPC payload (params, result, error data) goes into a log record:
 * - "full": all of it;
 * - "truncated": all of it when its JSON is at most maxBytes (UTF-8), else a preview with size and hash;
 * - "none": nothing; the caller logs `measurePayload` (size and hash) instead.
 */
export type PayloadMode = "full" | "truncated" | "none";

export const PAYLOAD_MODES: readonly PayloadMode[] = ["full", "truncated", "none"];
export const DEFAULT_PAYLOAD_MODE: PayloadMode = "truncated";
export const DEFAULT_MAX_PAYLOAD_BYTES = 65536;
