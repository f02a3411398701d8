/**
 * A server certificate the kubeconfig's CA does not vouch for is reported in
 * words that point at the kubeconfig, with OpenSSL's code, and without Node's
 * hint to run with `--use-system-ca` (rarely the fix for a cluster's own CA).
 */
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, type InformerError } from '../../src/index.ts';
import { tlsFailure } from '../../src/1-transport/httpTransport.ts';
import { httpListWatch } from '../../src/pipeline.ts';
import { startApiServer, TEST_TLS_CERT_B, type ApiServer } from 'rx-informer-emulator';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

function kubeConfig(server: string, cluster: Record<string, unknown>): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, ...cluster }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

describe('TLS verification errors', () => {
  it('a wrong CA in the kubeconfig: "not trusted by the cluster\'s certificate-authority (CA) in the kubeconfig", no --use-system-ca', async () => {
    api = await startApiServer({ tls: true });
    const kc = kubeConfig(api.url, { caData: Buffer.from(TEST_TLS_CERT_B).toString('base64') });
    const error = await firstValueFrom(httpListWatch(kc, { resource: ConfigMap }).list({})).then(
      () => undefined,
      (e: unknown) => e as InformerError,
    );
    expect(error?.reason).toBe('NetworkError');
    expect(error?.message).toMatch(
      /^list \/api\/v1\/configmaps: the server's certificate is not trusted by the cluster's certificate-authority \(CA\) in the kubeconfig: [A-Z_]+$/,
    );
    expect(error?.message).not.toMatch(/use-system-ca/);
  });

  it('names the system CAs when the kubeconfig names none, and says what else went wrong for other codes', () => {
    const failure = (
      code: string,
      message = 'unable to verify the first certificate; if the root CA is installed locally, try running Node.js with --use-system-ca',
    ) => Object.assign(new Error(message), { code });
    expect(tlsFailure(failure('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), { caData: 'x' })).toBe(
      "the server's certificate is not trusted by the cluster's certificate-authority (CA) in the kubeconfig: UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    );
    expect(tlsFailure(failure('SELF_SIGNED_CERT_IN_CHAIN'), {})).toMatch(
      /not trusted by the system CAs \(the kubeconfig names no certificate-authority/,
    );
    expect(tlsFailure(failure('CERT_HAS_EXPIRED'), { caFile: '/ca' })).toBe("the server's certificate is not valid now: CERT_HAS_EXPIRED");
    expect(tlsFailure(failure('ERR_TLS_CERT_ALTNAME_INVALID'), { caFile: '/ca' })).toMatch(/does not name the host/);
    expect(tlsFailure(failure('ECONNREFUSED', 'connect ECONNREFUSED'), {})).toBeUndefined();
  });
});
