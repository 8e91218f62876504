import { UsageError } from "../util/usage-error.js";
/**
 * A problem with the certificate authority that the user has to act on (a file missing, unreadable or
 * with the wrong permissions, a CA that has expired). The message says what is wrong and what to do.
 */
export class CaError extends UsageError {
  override readonly name = "CaError";
}

/** What to tell the user when the only way forward is a new CA. */
export function startOverAdvice(certPath: string, keyPath: string): string {
  return (
    `To start over with a new CA, stop mcp-wiretap, delete ${certPath} and ${keyPath}, start it ` +
    `again and trust the new ca.pem (and remove the old CA from every trust store you added it to).`
  );
}
