/**
 * Header values that Node's HTTP/1.1 client would refuse (src/1-transport/http/headerValues.ts), written by
 * client-node's auth providers (oidc's id-token), its impersonation (the kubeconfig's `as`) or our options
 * (`userAgent`): over HTTP/1.1 and HTTP/2 against the emulator at default options, the same `Config` error naming the
 * header, never its value, and nothing sent. Before (audit54): HTTP/1.1 gave Node's error, HTTP/2 sent the request,
 * anonymous with a 401 blaming the credential (a trailing newline in the token) or un-impersonated (`as: "bob\nX: 1"`).
 */
import { lastValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, InformerError } from '../../src/index.ts';
import { httpListWatch, type HttpTransportOptions } from '../../src/pipeline.ts';
import { headerValueFault } from '../../src/1-transport/http/headerValues.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
/** An unsigned JWT that client-node's oidc provider takes as unexpired; the emulator's `token` compares it whole. */
const JWT = `${b64({ alg: 'none' })}.${b64({ exp: Math.floor(Date.now() / 1000) + 3600 })}.sig`;

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

function kubeConfig(user: Record<string, unknown>): KubeConfig {
  const kc = new KubeConfig();
  const cluster = api!.caPem ? { caData: Buffer.from(api!.caPem).toString('base64') } : { skipTLSVerify: true };
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: api!.url, ...cluster }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

async function attempt(kc: KubeConfig, http: HttpTransportOptions): Promise<'ok' | InformerError> {
  try {
    await lastValueFrom(httpListWatch(kc, { resource: ConfigMap, namespace: 'default' }, http).list({ limit: 500 }));
    return 'ok';
  } catch (error) {
    return error as InformerError;
  }
}

describe('headerValueFault', () => {
  it("allows Node's HTTP/1.1 rule (tab, 0x20–0x7E, 0x80–0xFF) and refuses the rest, naming the header, not the value", () => {
    expect(headerValueFault({ A: 'x\ty z~', B: ['é\u00ff\u0080'], C: 3, D: undefined })).toBeUndefined();
    for (const [bad, point] of [
      ['\n', 'U+000A'],
      ['\r', 'U+000D'],
      ['\u0000', 'U+0000'],
      ['\u007f', 'U+007F'],
      ['\u0100', 'U+0100'],
      ['\u2028', 'U+2028'],
    ] as const) {
      const e = headerValueFault({ Accept: 'a', 'Impersonate-Group': ['ok', `secret${bad}x`] });
      expect(e).toBeInstanceOf(InformerError);
      expect(e!.reason).toBe('Config');
      expect(e!.phase).toBe('config');
      expect(e!.message).toBe(
        `cannot apply the KubeConfig: Invalid character in header content ["Impersonate-Group"] (${point} at position 7 of 8)`,
      );
    }
  });
});

for (const protocol of ['http1', 'h2'] as const) {
  describe(`a header value that may not be sent, over ${protocol === 'h2' ? 'HTTP/2' : 'HTTP/1.1'}`, () => {
    const start = () => startApiServer({ ...(protocol === 'h2' ? { http2: true } : {}), token: JWT });
    const cases = [
      ["an oidc auth provider's id-token with a trailing newline", { authProvider: { name: 'oidc', config: { 'id-token': `${JWT}\n` } } }],
      ["the kubeconfig's `as` (Impersonate-User) with an injected header", { token: JWT, impersonateUser: 'bob\nX-Injected: 1' }],
    ] as const;
    for (const [name, user] of cases) {
      it(`${name}: a Config error naming the header, nothing sent`, async () => {
        api = await start();
        const e = await attempt(kubeConfig(user), { protocol });
        expect(e).toBeInstanceOf(InformerError);
        expect((e as InformerError).reason).toBe('Config');
        const header = 'impersonateUser' in user ? 'Impersonate-User' : 'Authorization';
        expect((e as InformerError).message).toMatch(
          new RegExp(
            `^cannot apply the KubeConfig: Invalid character in header content \\["${header}"\\] \\(U\\+000A at position \\d+ of \\d+\\)$`,
          ),
        );
        expect((e as InformerError).message).not.toContain('bob');
        expect((e as InformerError).message).not.toContain(JWT);
        expect(api.requests).toHaveLength(0);
      });
    }

    it('a userAgent option with a newline: the same Config error; the good values still reach the server', async () => {
      api = await start();
      const e = await attempt(kubeConfig({ token: JWT }), { protocol, userAgent: 'me\r\nX-Injected: 1' });
      expect((e as InformerError).message).toBe(
        'cannot apply the KubeConfig: Invalid character in header content ["User-Agent"] (U+000D at position 3 of 17)',
      );
      expect(api.requests).toHaveLength(0);
      expect(await attempt(kubeConfig({ authProvider: { name: 'oidc', config: { 'id-token': JWT } } }), { protocol })).toBe('ok');
      expect(await attempt(kubeConfig({ token: JWT, impersonateUser: 'bob' }), { protocol, userAgent: 'me\tvé' })).toBe('ok');
      expect(api.requests).toHaveLength(2);
    });
  });
}
