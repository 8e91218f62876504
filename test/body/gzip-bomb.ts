import zlib from "node:zlib";

const MiB = 1024 * 1024;

/**
 * A valid gzip member holding `mebibytes` MiB of zeros, built without compressing them all: one
 * sync-flushed (non-final) deflate block for 1 MiB of zeros decodes the same wherever it is repeated,
 * since it only refers back to zeros. Then a final empty block and the gzip trailer.
 */
export function gzipOfZeros(mebibytes: number): Buffer {
  const zeros = Buffer.alloc(MiB);
  const block = zlib.deflateRawSync(zeros, { level: 9, finishFlush: zlib.constants.Z_SYNC_FLUSH });
  let crc = 0;
  for (let i = 0; i < mebibytes; i++) crc = zlib.crc32(zeros, crc);
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
  const finalEmptyBlock = Buffer.from([0x03, 0x00]);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE((mebibytes * MiB) % 2 ** 32, 4);
  return Buffer.concat([header, ...Array.from({ length: mebibytes }, () => block), finalEmptyBlock, trailer]);
}
