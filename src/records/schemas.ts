/** The record schemas (one per record type, by family in ./schemas/); this path is the one callers import. */
export * from "./schemas/index.js";
