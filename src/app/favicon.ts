// GET /favicon.ico: a 16x16 shield with a check mark, drawn below as text and written as an ICO
// holding one 32-bit BMP, the one icon format every browser reads at /favicon.ico.

const SHIELD = [
  "................",
  ".##############.",
  ".##############.",
  ".###########oo#.",
  ".##########oo##.",
  ".#########oo###.",
  ".#oo#####oo####.",
  ".##oo###oo#####.",
  ".###oo#oo######.",
  "..###ooo######..",
  "..####o#######..",
  "...##########...",
  "....########....",
  ".....######.....",
  "......####......",
  ".......##.......",
];

// BGRA: the console's dark grey (#1f2937), white, transparent.
const COLOURS: Record<string, number[]> = { "#": [0x37, 0x29, 0x1f, 0xff], o: [0xff, 0xff, 0xff, 0xff], ".": [0, 0, 0, 0] };

/** The ICO file: directory, BITMAPINFOHEADER, pixels bottom-up, then an all-zero AND mask (alpha decides). */
export function faviconIco(rows: readonly string[] = SHIELD): Uint8Array<ArrayBuffer> {
  const size = rows.length;
  if (size > 255 || rows.some((row) => row.length !== size)) throw new Error("the icon must be square, at most 255 pixels");
  const maskRow = Math.ceil(size / 32) * 4;
  const image = 40 + size * size * 4 + maskRow * size;
  const out = Buffer.alloc(6 + 16 + image);
  out.writeUInt16LE(1, 2); // type: icon
  out.writeUInt16LE(1, 4); // one image
  out.writeUInt8(size, 6);
  out.writeUInt8(size, 7);
  out.writeUInt16LE(1, 10); // planes
  out.writeUInt16LE(32, 12); // bits per pixel
  out.writeUInt32LE(image, 14);
  out.writeUInt32LE(22, 18); // offset of the image
  out.writeUInt32LE(40, 22);
  out.writeInt32LE(size, 26);
  out.writeInt32LE(size * 2, 30); // the colour rows and the mask rows
  out.writeUInt16LE(1, 34);
  out.writeUInt16LE(32, 36);
  let at = 62;
  for (const row of [...rows].reverse()) {
    for (const pixel of row) {
      const colour = COLOURS[pixel];
      if (!colour) throw new Error(`unknown pixel ${pixel}`);
      out.set(colour, at);
      at += 4;
    }
  }
  return new Uint8Array(out);
}
