/** Whose share of the inspection budget a body is charged to: its sender, as `proxy/peer-key.ts` names it. */
export { peerKey as inspectPeer } from "../proxy/peer-key.js";
