import { deflateSync } from "node:zlib"

/**
 * Small real PNG pictures for the demo marketplace, drawn in code (no image library, no files in
 * the repository): a diagonal two-colour gradient with soft circles and a band, so every profile's
 * pictures look different and a catalog page has something to show.
 */

export type Rgb = readonly [number, number, number]

export interface PictureSpec {
  readonly width: number
  readonly height: number
  readonly from: Rgb
  readonly to: Rgb
  /** Light circles: centre and radius as fractions of the width. */
  readonly circles: ReadonlyArray<{ readonly x: number; readonly y: number; readonly r: number; readonly alpha: number }>
  /** A translucent horizontal band (fractions of the height), or none. */
  readonly band?: { readonly top: number; readonly bottom: number; readonly color: Rgb; readonly alpha: number } | undefined
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

const crc32 = (bytes: Uint8Array): number => {
  let crc = 0xffffffff
  for (let i = 0; i < bytes.length; i++) crc = crcTable[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

const chunk = (type: string, data: Uint8Array): Buffer => {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, "latin1")
  const tail = Buffer.alloc(4)
  tail.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
  return Buffer.concat([head, data, tail])
}

const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** Encodes 8-bit RGB pixels (row-major, 3 bytes a pixel) as a PNG; each row uses the Sub filter. */
export const encodePng = (width: number, height: number, rgb: Uint8Array): Uint8Array => {
  const stride = width * 3
  const filtered = new Uint8Array((stride + 1) * height)
  for (let y = 0; y < height; y++) {
    const row = y * stride
    const out = y * (stride + 1)
    filtered[out] = 1 // Sub: each byte minus the same channel of the pixel on its left; gradients become near-constant
    for (let x = 0; x < stride; x++) {
      filtered[out + 1 + x] = (rgb[row + x]! - (x >= 3 ? rgb[row + x - 3]! : 0)) & 0xff
    }
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header[8] = 8 // bit depth
  header[9] = 2 // colour type: RGB
  return new Uint8Array(Buffer.concat([
    signature,
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(filtered, { level: 4 })),
    chunk("IEND", new Uint8Array(0))
  ]))
}

const mix = (a: number, b: number, t: number) => a + (b - a) * t

/** Draws the picture a spec describes and encodes it as PNG. */
export const drawPicture = (spec: PictureSpec): Uint8Array => {
  const { height, width } = spec
  const rgb = new Uint8Array(width * height * 3)
  const row = new Float32Array(width * 3)
  const circles = spec.circles.map((c) => ({ x: c.x * width, y: c.y * width, r: c.r * width, alpha: c.alpha }))
  const blend = (from: number, to: number, color: Rgb, alpha: number) => {
    for (let x = from; x < to; x++) {
      row[x * 3] = mix(row[x * 3]!, color[0], alpha)
      row[x * 3 + 1] = mix(row[x * 3 + 1]!, color[1], alpha)
      row[x * 3 + 2] = mix(row[x * 3 + 2]!, color[2], alpha)
    }
  }
  const white: Rgb = [255, 255, 255]
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const t = (x / width + y / height) / 2
      row[x * 3] = mix(spec.from[0], spec.to[0], t)
      row[x * 3 + 1] = mix(spec.from[1], spec.to[1], t)
      row[x * 3 + 2] = mix(spec.from[2], spec.to[2], t)
    }
    // Each circle covers one span of this row (none when the row misses it).
    for (const c of circles) {
      const dy = y - c.y
      if (dy * dy > c.r * c.r) continue
      const half = Math.sqrt(c.r * c.r - dy * dy)
      blend(Math.max(0, Math.ceil(c.x - half)), Math.min(width, Math.floor(c.x + half) + 1), white, c.alpha)
    }
    if (spec.band !== undefined && y >= spec.band.top * height && y < spec.band.bottom * height) {
      blend(0, width, spec.band.color, spec.band.alpha)
    }
    const at = y * width * 3
    for (let i = 0; i < width * 3; i++) rgb[at + i] = Math.round(row[i]!)
  }
  return encodePng(width, height, rgb)
}
