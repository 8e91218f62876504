/** The standard streams of an in-process command, captured: `out` holds what it wrote. */
import { PassThrough } from "node:stream";

export function capturedIo() {
  const out = { stdout: "", stderr: "" };
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on("data", (c: Buffer) => (out.stdout += c.toString()));
  stderr.on("data", (c: Buffer) => (out.stderr += c.toString()));
  return { out, io: { stdout, stderr, stdin: new PassThrough(), env: {} } };
}
