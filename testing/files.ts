/** Small files of every format a file may have, for upload and sniffing tests. */

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

const crc32 = (bytes: Uint8Array) => {
  let crc = 0xffffffff
  for (const byte of bytes) crc = crcTable[(crc ^ byte) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

/** A zip archive of stored (uncompressed) entries, with a real central directory. */
export const zipOf = (entries: ReadonlyArray<readonly [name: string, content: string]>): Uint8Array => {
  const locals: Array<Buffer> = []
  const centrals: Array<Buffer> = []
  let offset = 0
  for (const [name, content] of entries) {
    const nameBytes = Buffer.from(name, "utf8")
    const data = Buffer.from(content, "utf8")
    const crc = crc32(data)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(data.length, 18)
    local.writeUInt32LE(data.length, 22)
    local.writeUInt16LE(nameBytes.length, 26)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE(20, 4)
    central.writeUInt16LE(20, 6)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(data.length, 20)
    central.writeUInt32LE(data.length, 24)
    central.writeUInt16LE(nameBytes.length, 28)
    central.writeUInt32LE(offset, 42)
    locals.push(local, nameBytes, data)
    centrals.push(central, nameBytes)
    offset += 30 + nameBytes.length + data.length
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return new Uint8Array(Buffer.concat([...locals, directory, end]))
}

const bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>) =>
  new Uint8Array(Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part, "latin1") : Buffer.from(part)))))

const base64 = (text: string) => new Uint8Array(Buffer.from(text, "base64"))

/** One valid sample per format (by signature; images are real 1×1 pictures where that is short). */
export const sampleFiles = {
  "image/png": base64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="),
  "image/jpeg": bytes([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10], "JFIF", [0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xd9]),
  "image/gif": base64("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"),
  "image/webp": bytes("RIFF", [0x1a, 0, 0, 0], "WEBPVP8L", [0x0d, 0, 0, 0, 0x2f, 0, 0, 0, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xfe, 0x07, 0x00]),
  "image/avif": bytes([0, 0, 0, 0x1c], "ftyp", "avif", [0, 0, 0, 0], "avif", "mif1", "miaf", [0, 0, 0, 8], "mdat"),
  "application/pdf": bytes("%PDF-1.4\n%", [0xe2, 0xe3, 0xcf, 0xd3], "\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"),
  "text/plain": new Uint8Array(Buffer.from("Привет, мир!\nHello, world.\n", "utf8")),
  "text/csv": new Uint8Array(Buffer.from("name,price\nЛоготип,5000\n", "utf8")),
  "application/json": new Uint8Array(Buffer.from('{"items":[1,2,3],"name":"тест"}', "utf8")),
  "application/zip": zipOf([["readme.txt", "hello"]]),
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": zipOf([
    ["[Content_Types].xml", "<Types/>"],
    ["word/document.xml", "<w:document/>"]
  ]),
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": zipOf([
    ["[Content_Types].xml", "<Types/>"],
    ["xl/workbook.xml", "<workbook/>"]
  ])
} as const
