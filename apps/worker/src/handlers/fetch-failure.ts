/**
 * Why a fetch failed, in words an operator can act on. Node's fetch rejects with a bare
 * "fetch failed" and puts the reason in `cause` (a system error with a code such as
 * ECONNREFUSED, or an undici error); the job's error should name that reason and the host
 * and port it was about, since "fetch failed" alone says nothing of where to look.
 */

/** A TLS failure's codes: OpenSSL's (ERR_SSL_*), Node's (ERR_TLS_*) and the certificate checks'. */
function isTlsCode(code: string): boolean {
  return code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code.includes('CERT') || code === 'EPROTO' || code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE';
}

interface Cause {
  code: string | null;
  message: string;
}

/** The innermost coded cause; an AggregateError (one try per address) gives its first coded error. */
function causeOf(err: unknown): Cause | null {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const coded = current as Error & { code?: unknown; errors?: unknown };
    if (typeof coded.code === 'string') return { code: coded.code, message: coded.message };
    if (Array.isArray(coded.errors)) {
      const first = coded.errors.find((e): e is Error & { code: string } => e instanceof Error && typeof (e as { code?: unknown }).code === 'string');
      if (first) return { code: first.code, message: first.message };
    }
    current = current.cause;
  }
  return err instanceof Error && err.cause instanceof Error ? { code: null, message: err.cause.message } : null;
}

/** host:port of the URL, with the scheme's default port when it has none. */
export function hostPort(url: URL): string {
  const port = url.port || (url.protocol === 'https:' ? '443' : url.protocol === 'http:' ? '80' : '');
  return port ? `${url.hostname}:${port}` : url.hostname;
}

/** The reason in words, without the method and URL (the caller puts those in front). */
export function describeFetchFailure(err: unknown, url: URL): string {
  const where = hostPort(url);
  const cause = causeOf(err);
  const code = cause?.code ?? null;
  const tag = code ? ` (${code})` : '';
  switch (code) {
    case 'ENOTFOUND':
      return `DNS name not found: ${url.hostname} (for ${where})${tag}`;
    case 'EAI_AGAIN':
      return `DNS lookup of ${url.hostname} failed for now (no answer from the resolver), connecting to ${where}${tag}`;
    case 'ECONNREFUSED':
      return `connection refused by ${where}: nothing listens there${tag}`;
    case 'ECONNRESET':
      return `connection to ${where} reset by the other end${tag}`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `no route to ${where}${tag}`;
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `timed out connecting to ${where}${tag}`;
    case 'UND_ERR_HEADERS_TIMEOUT':
      return `timed out waiting for ${where} to answer${tag}`;
    case 'UND_ERR_BODY_TIMEOUT':
      return `timed out reading the answer from ${where}${tag}`;
    case 'UND_ERR_SOCKET':
      return `connection to ${where} closed before the answer was complete${tag}`;
  }
  if (code && isTlsCode(code)) return `TLS error with ${where}: ${firstLine(cause!.message)}${tag}`;
  if (cause) return `request to ${where} failed: ${firstLine(cause.message)}${tag}`;
  return `request to ${where} failed: ${err instanceof Error ? err.message : String(err)}`;
}

/** OpenSSL messages run to several lines of internals; the first says what went wrong. */
function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}
