/**
 * Reads a request body up to `maxBytes`, counting the bytes as they arrive, so a body sent
 * without Content-Length (chunked) is cut off at the limit like one that declares its size.
 * Returns the bytes read, or `null` as soon as the count passes the limit: the rest of the
 * stream is cancelled, never read and never parsed.
 */
export async function readBodyWithin(req: Request, maxBytes: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = Number(req.headers.get('content-length') ?? 0);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await req.body?.cancel().catch(() => undefined);
    return null;
  }
  if (req.body === null) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

/**
 * The same request with its body already read, for a handler that reads the body itself.
 * Only the headers that describe the bytes are dropped: the new body states its own length.
 */
export function withBody(req: Request, body: Uint8Array<ArrayBuffer>): Request {
  const headers = new Headers(req.headers);
  headers.delete('content-length');
  headers.delete('transfer-encoding');
  return new Request(req.url, { method: req.method, headers, body: body.byteLength > 0 ? body : undefined, signal: req.signal });
}
