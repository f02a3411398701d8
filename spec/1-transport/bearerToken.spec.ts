/**
 * A bearer token that may not be sent in a header (src/1-transport/http/bearerToken.ts), from an exec plugin, a
 * token file or the kubeconfig, over HTTP/1.1 and HTTP/2 against the emulator at default options: refused where it
 * comes from (`CredentialPlugin` / `Config`), never quoted, never sent, and an exec plugin's bad run is not cached
 * (the next request runs the plugin again). Before: HTTP/1.1 failed every request with Node's "Invalid character in
 * header content" and never ran the plugin again; HTTP/2 sent the request anonymously (a trailing newline), with an
 * injected header, or got a PROTOCOL_ERROR that blamed the server (NUL).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, InformerError } from '../../src/index.ts';
import { httpListWatch } from '../../src/pipeline.ts';
import { bearerTokenFault } from '../../src/1-transport/http/bearerToken.ts';
import { parseCredential } from '../../src/1-transport/http/execCredential.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

const V1 = 'client.authentication.k8s.io/v1';
const SECRET = 'tok-secret-5e3c1f0a9b7d4e2f8a6c';
const BAD = [
  ['a newline and a header', `${SECRET}\nX-Injected: 1`, 'U+000A'],
  ['a trailing newline', `${SECRET}\n`, 'U+000A'],
  ['NUL', `${SECRET}\u0000`, 'U+0000'],
  ['U+2028', `${SECRET}\u2028`, 'U+2028'],
  ['a blank', `${SECRET} x`, 'U+0020'],
] as const;

let api: ApiServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
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

/** An exec plugin printing `token`; each run appends a byte to dir/runs. */
function execUser(token: string): Record<string, unknown> {
  dir ??= mkdtempSync(join(tmpdir(), 'rx-informer-bearer-'));
  const file = join(dir, 'plugin.mjs');
  writeFileSync(
    file,
    `import { appendFileSync } from 'node:fs';
     appendFileSync(${JSON.stringify(join(dir, 'runs'))}, 'x');
     process.stdout.write(JSON.stringify({ apiVersion: '${V1}', kind: 'ExecCredential', status: { token: ${JSON.stringify(token)} } }));`,
  );
  return { exec: { apiVersion: V1, command: process.execPath, args: [file], env: [], interactiveMode: 'Never' } };
}

const runs = () => (dir && existsSync(join(dir, 'runs')) ? readFileSync(join(dir, 'runs'), 'utf8').length : 0);

/** A list's outcome at default options but the protocol. */
async function attempt(kc: KubeConfig, protocol: 'http1' | 'h2'): Promise<'ok' | InformerError> {
  try {
    await lastValueFrom(httpListWatch(kc, { resource: ConfigMap, namespace: 'default' }, { protocol }).list({ limit: 500 }));
    return 'ok';
  } catch (error) {
    return error as InformerError;
  }
}

describe('bearerTokenFault', () => {
  it('allows visible ASCII only, and names the first bad character without quoting the token', () => {
    expect(bearerTokenFault('eyJhbGciOi.J-_~+/=:!#$%&*')).toBeUndefined();
    expect(bearerTokenFault('ab\tc')).toBe(
      'holds a character that may not be sent in an HTTP header (U+0009 at position 3 of 4; only visible ASCII is)',
    );
    expect(bearerTokenFault('abcé')).toContain('U+00E9 at position 4');
    expect(bearerTokenFault('abc\u007f')).toContain('U+007F');
  });
  it("parseCredential refuses such a token in the plugin's status", () => {
    const out = parseCredential(JSON.stringify({ apiVersion: V1, kind: 'ExecCredential', status: { token: `${SECRET}\r\n` } }), V1);
    expect(out).toBe(
      'status.token holds a character that may not be sent in an HTTP header (U+000D at position 32 of 33; only visible ASCII is)',
    );
  });
});

for (const protocol of ['http1', 'h2'] as const) {
  const start = () => startApiServer(protocol === 'h2' ? { http2: true } : {});
  describe(`a token that may not be sent in a header, over ${protocol === 'h2' ? 'HTTP/2' : 'HTTP/1.1'}`, () => {
    for (const [name, token, point] of BAD) {
      it(`from an exec plugin (${name}): a CredentialPlugin failure, not cached, nothing sent`, async () => {
        api = await start();
        const kc = kubeConfig(execUser(token));
        const results = [await attempt(kc, protocol), await attempt(kc, protocol), await attempt(kc, protocol)];
        for (const r of results) {
          expect(r).toBeInstanceOf(InformerError);
          const e = r as InformerError;
          expect(e.reason).toBe('CredentialPlugin');
          expect(e.message).toContain(`status.token holds a character that may not be sent in an HTTP header (${point}`);
          expect(e.message).not.toContain(SECRET);
        }
        expect(runs()).toBe(3);
        expect(api.requests).toHaveLength(0);
      });
    }

    it('from a token file: a Config error naming the file, nothing sent; a good token in it is read again', async () => {
      api = await start();
      dir ??= mkdtempSync(join(tmpdir(), 'rx-informer-bearer-'));
      const file = join(dir, 'token');
      writeFileSync(file, `${SECRET}\nX-Injected: 1\n`);
      const kc = kubeConfig({ authProvider: { name: 'tokenFile', config: { tokenFile: file } } });
      const e = (await attempt(kc, protocol)) as InformerError;
      expect(e).toBeInstanceOf(InformerError);
      expect(e.reason).toBe('Config');
      expect(e.message).toContain(`cannot read the token file ${file}: the token holds a character that may not be sent`);
      expect(e.message).not.toContain(SECRET);
      expect(api.requests).toHaveLength(0);
      writeFileSync(file, `${SECRET}\n`);
      expect(await attempt(kc, protocol)).toBe('ok');
      expect(api.requests).toHaveLength(1);
    });

    it("from the kubeconfig's own token: a Config error naming the user, nothing sent", async () => {
      api = await start();
      const e = (await attempt(kubeConfig({ token: `${SECRET}\nX-Injected: 1` }), protocol)) as InformerError;
      expect(e).toBeInstanceOf(InformerError);
      expect(e.reason).toBe('Config');
      expect(e.message).toBe(
        'the token of user "u" holds a character that may not be sent in an HTTP header (U+000A at position 32 of 45; only visible ASCII is)',
      );
      expect(api.requests).toHaveLength(0);
      expect(await attempt(kubeConfig({ token: SECRET }), protocol)).toBe('ok');
    });
  });
}
