/** The `auth` addon (OAuth traffic as `event: "auth"` records); the parts live in `./auth/`. */

export { authTrafficAddon, DEFAULT_AUTH_MAX_BODY_BYTES, type AuthTrafficOptions } from "./auth/addon.js";
export { discoveryDocument } from "./auth/classify.js";
export type { AuthStep, DiscoveryDocument } from "./auth/flow.js";
export { authorizationScheme } from "./auth/wire-values.js";
