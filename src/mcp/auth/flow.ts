import type { Exchange } from "../../proxy/exchange.js";
import type { Capture } from "./capture.js";

export type AuthStep = "challenge" | "discovery" | "token" | "registration";
export type DiscoveryDocument = "oauth-protected-resource" | "oauth-authorization-server" | "openid-configuration";

/** What the addon knows about one exchange. */
export class AuthFlow {
  document: DiscoveryDocument | undefined;
  request: Capture | undefined;
  response: Capture | undefined;
  challenge: Record<string, string> | undefined;
  constructor(readonly ex: Exchange) {}
}
