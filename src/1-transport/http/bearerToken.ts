// What a bearer token may hold to be sent as `Authorization: Bearer <token>`. Checked where a token comes from (an
// exec plugin, a token file, the kubeconfig), so that a bad one fails there, with a message naming its source, and is
// not cached: Node's HTTP/1.1 client refuses a header with a control or non-Latin-1 character at every request, and
// its HTTP/2 client sends what it is given (a trailing newline dropped the header and the request went anonymous,
// `\nX-Injected: 1` became another header, NUL a PROTOCOL_ERROR that blamed the server, U+2028 another byte).

/**
 * Why `token` cannot be a bearer token, or undefined when it can: only visible ASCII (0x21–0x7E) is allowed. RFC 6750's
 * b64token is narrower (letters, digits, `-._~+/` and trailing `=`); the wider set keeps working the tokens some
 * webhook authenticators hand out. client-go checks nothing and Go's net/http refuses control characters at each
 * request (the credential stays cached); no real token holds a blank, a control character or non-ASCII. The message
 * names the first bad character's code point and position, never the token.
 */
export function bearerTokenFault(token: string): string | undefined {
  const where = badCharacterAt(token, /[^\x21-\x7e]/);
  return where === undefined ? undefined : `holds a character that may not be sent in an HTTP header (${where}; only visible ASCII is)`;
}

/** Where `text`'s first character matching `bad` is, in words (`U+000A at position 4 of 17`), or undefined for none. */
export function badCharacterAt(text: string, bad: RegExp): string | undefined {
  const found = bad.exec(text);
  if (!found) return undefined;
  return `U+${(found[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')} at position ${found.index + 1} of ${text.length}`;
}
