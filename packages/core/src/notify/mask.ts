/**
 * How every read shows a channel's URL. A channel URL often is a credential: a Slack
 * webhook's path is its token, and other receivers put a key in the query or in user info.
 * So a read keeps what says where notifications go (scheme, host and port) and replaces the
 * rest with an ellipsis and its last few characters, enough to tell two channels of one host
 * apart without giving away a usable URL. Only the leader that delivers reads the full URL.
 */

/** How many characters of the path and query a masked URL keeps, at its end. */
export const MASK_TAIL_CHARS = 4;

/** A path and query shorter than this is hidden whole: its tail would be most of it. */
export const MASK_MIN_HIDDEN_CHARS = 12;

const MASK = '…';

/**
 * The masked form of a channel URL: `https://hooks.slack.com/…abcd` for a long path and
 * query, `https://host.example/…` for a short one, `https://host.example/` when there is
 * none. User info is dropped. Something that is no URL is shown as the ellipsis alone, so a
 * read never echoes it.
 */
export function maskChannelUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return MASK;
  }
  const origin = `${parsed.protocol}//${parsed.host}`;
  const rest = `${parsed.pathname}${parsed.search}${parsed.hash}`.replace(/^\//, '');
  if (rest === '') return `${origin}/`;
  if (rest.length < MASK_MIN_HIDDEN_CHARS) return `${origin}/${MASK}`;
  return `${origin}/${MASK}${rest.slice(-MASK_TAIL_CHARS)}`;
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;

/**
 * A text (a delivery's last error) with every URL in it masked as maskChannelUrl does, so an
 * error that quotes the address it failed to reach does not give the address away.
 */
export function maskUrlsIn(text: string): string {
  return text.replace(URL_IN_TEXT, (found) => maskChannelUrl(found));
}
