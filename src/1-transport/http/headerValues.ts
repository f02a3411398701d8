import type { OutgoingHttpHeaders } from 'node:http';
import { InformerError } from '../../0-model/errors.ts';
import { badCharacterAt } from './bearerToken.ts';

// Every request's header values, checked once its credentials are applied and before it goes over either protocol.
// Node's HTTP/1.1 client refuses a value with a character outside its rule at each request ("Invalid character in
// header content"); its HTTP/2 client sends what it is given: a trailing newline in an auth provider's token dropped
// the header (the request went anonymous and its 401 blamed the credential), `bob\nX-Injected: 1` in the kubeconfig's
// `as` dropped Impersonate-User (the request ran with the user's own, wider rights). Checking here, where every
// source of a header (client-node's auth providers, impersonation, our options) has written, gives both protocols
// the same `Config` error, with nothing sent.

/** Node's HTTP/1.1 rule for a header value: tab, visible ASCII and blank, and 0x80–0xFF (Latin-1). */
const BAD_CHARACTER = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * The `Config` error for the first header whose value Node's HTTP/1.1 client would refuse, or undefined when all
 * may be sent. It names the header, the character's code point and position, never the value (a credential).
 */
export function headerValueFault(headers: OutgoingHttpHeaders | readonly string[] | undefined): InformerError | undefined {
  if (headers === undefined || Array.isArray(headers)) return undefined;
  for (const [name, value] of Object.entries(headers as OutgoingHttpHeaders)) {
    for (const text of typeof value === 'string' ? [value] : Array.isArray(value) ? value : []) {
      const where = badCharacterAt(text, BAD_CHARACTER);
      if (where === undefined) continue;
      return new InformerError('Config', `cannot apply the KubeConfig: Invalid character in header content ["${name}"] (${where})`, {
        phase: 'config',
      });
    }
  }
  return undefined;
}
