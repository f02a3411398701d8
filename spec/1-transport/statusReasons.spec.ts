/**
 * Every reason the transport gives an HTTP status comes from the one mapping, `reasonForStatus`
 * (src/0-model/errors.ts): a list, a document GET and a Lease write each answered with every status of
 * interest, over real HTTP on 127.0.0.1. spec/repo/oneHome.spec.ts finds a second mapping in src/.
 */
import { firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InformerError, reasonForStatus } from '../../src/0-model/errors.ts';
import { ConfigMap } from '../../src/0-model/resources.ts';
import { getJson, httpListWatch, requestJson } from '../../src/1-transport/httpTransport.ts';
import { hostileServer, status, type HostileServer } from '../resilience/hostile/server.ts';

const STATUSES: readonly [number, string][] = [
  [400, 'BadRequest'],
  [401, 'Unauthorized'],
  [403, 'Forbidden'],
  [404, 'NotFound'],
  [405, 'MethodNotAllowed'],
  [409, 'Conflict'],
  [410, 'Expired'],
  [410, 'Gone'],
  [418, 'Teapot'],
  [422, 'Invalid'],
  [429, 'TooManyRequests'],
  [500, 'InternalError'],
  [502, 'BadGateway'],
  [503, 'ServiceUnavailable'],
  [504, 'Timeout'],
];

let server: HostileServer;
beforeAll(async () => {
  server = await hostileServer();
});
afterAll(async () => {
  await server.close();
});

async function failure(request: () => Promise<unknown>): Promise<InformerError> {
  const error = await request().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof InformerError)) throw new Error(`expected an InformerError, got ${String(error)}`);
  return error;
}

describe('the reason of every HTTP status the transport meets is reasonForStatus', () => {
  it.each(STATUSES)('%i (%s): a list, a document GET and a PUT', async (code, statusReason) => {
    server.on('list', status(code, statusReason, `said ${code}`));
    server.on('discovery', status(code, statusReason, `said ${code}`));
    const expected = reasonForStatus(code, statusReason);
    const list = await failure(() => firstValueFrom(httpListWatch(server.kc, { resource: ConfigMap }).list({})));
    const document = await failure(() => firstValueFrom(getJson(server.kc, '/apis')));
    const put = await failure(() =>
      firstValueFrom(requestJson(server.kc, '/apis/coordination.k8s.io/v1/namespaces/ops/leases/a', { method: 'PUT', body: {} })),
    );
    for (const error of [list, document, put]) {
      expect([error.reason, error.status, error.message]).toEqual([expected, code, `said ${code}`]);
    }
  });

  it('504 is Timeout and 410 is Expired or Gone (client-go: IsTimeout, IsResourceExpired, IsGone)', () => {
    expect(reasonForStatus(504)).toBe('Timeout');
    expect(reasonForStatus(410)).toBe('Expired');
    expect(reasonForStatus(410, 'Gone')).toBe('Gone');
  });
});
