/** Text in and out of the Unicode encodings a lenient JSON server may accept, with no byte-order mark. */
const WIDE = /^utf-?(16|32)(le|be)?$/;

export function encodeText(text: string, charset: string): Buffer {
  const wide = WIDE.exec(charset.toLowerCase());
  if (!wide) return Buffer.from(text, charset.toLowerCase() === "iso-8859-1" ? "latin1" : "utf8");
  const big = wide[2] === "be";
  if (wide[1] === "16") {
    const le = Buffer.from(text, "utf16le");
    return big ? le.swap16() : le;
  }
  const points = [...text].map((c) => c.codePointAt(0)!);
  const out = Buffer.alloc(points.length * 4);
  points.forEach((p, i) => (big ? out.writeUInt32BE(p, i * 4) : out.writeUInt32LE(p, i * 4)));
  return out;
}

export function decodeText(bytes: Buffer, charset: string): string | undefined {
  const wide = WIDE.exec(charset.toLowerCase());
  if (!wide) return charset.toLowerCase() === "iso-8859-1" ? bytes.toString("latin1") : bytes.toString("utf8");
  const size = Number(wide[1]) / 8;
  const big = wide[2] === "be";
  if (bytes.length % size !== 0) return undefined;
  if (size === 2) return new TextDecoder(big ? "utf-16be" : "utf-16le").decode(bytes);
  let text = "";
  for (let at = 0; at < bytes.length; at += 4) {
    const point = big ? bytes.readUInt32BE(at) : bytes.readUInt32LE(at);
    if (point > 0x10ffff) return undefined;
    text += String.fromCodePoint(point);
  }
  return text;
}

/** The encoding RFC 4627 §3 infers from the zero bytes among the first four, as some servers still do. */
export function sniffCharset(bytes: Buffer): string {
  const z = [...bytes.subarray(0, 4)].map((b) => (b === 0 ? "0" : "x")).join("");
  return z === "000x" ? "utf-32be" : z === "x000" ? "utf-32le" : z.startsWith("0x") ? "utf-16be" : z.startsWith("x0") ? "utf-16le" : "utf-8";
}
