/** A problem with what the user asked for (options, files, configuration): the CLI exits 2 with the message. */
export class UsageError extends Error {
  override name = "UsageError";
}
