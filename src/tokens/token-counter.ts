/**
 * Token estimates with a maintained tokenizer (gpt-tokenizer, the o200k_base encoding of current OpenAI
 * models). Other models tokenize differently: every figure is an estimate, and says so. The encoding's
 * tables are loaded on first use only, so commands that do not ask for tokens pay nothing at start-up.
 */
export const TOKEN_ENCODING = "o200k_base";

export type CountTokens = (text: string) => number;

export async function loadTokenCounter(): Promise<CountTokens> {
  const { countTokens } = await import("gpt-tokenizer/encoding/o200k_base");
  return (text) => countTokens(text);
}

/** The tokens of each of a batch of texts (counted in this thread, or in a worker: src/tokens/token-worker.ts). */
export type CountBatch = (texts: readonly string[]) => Promise<number[]>;

/** For commands that are not the proxy (`export --html`): the counting pauses only them. */
export const countInThread: CountBatch = async (texts) => {
  const count = await loadTokenCounter();
  return texts.map(count);
};
