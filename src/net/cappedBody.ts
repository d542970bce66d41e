// An HTTP answer's body read into memory only up to a bound: a declared length above it is refused
// before reading, and an endless or oversized body once that much has arrived (the stream is
// cancelled). Used for every provider the service downloads from (AI, MusicBrainz, reference files).

/**
 * The body's bytes, at most `max`; past it `tooLarge(declared)` is thrown, `declared` being the
 * announced content-length when that was the reason, else null.
 */
export async function readCappedBody(
  res: Response,
  max: number,
  tooLarge: (declared: number | null) => Error,
): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge(declared);
  }
  if (!res.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > max) {
      await res.body.cancel().catch(() => {});
      throw tooLarge(null);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
