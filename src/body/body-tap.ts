/**
 * A copy of a body as it streams through. `end` is called once; `abort` instead when the body broke off
 * (`reason` says why: the exchange's error). Defined here, where bodies are read, so that the decoders need
 * nothing of the transport that feeds them.
 */
export interface BodyTap {
  data(chunk: Buffer): void;
  end(): void;
  abort?(reason: { readonly code: string; readonly message: string }): void;
}
