/**
 * A LeaseError is an InformerError (audit19: one home for "an error of ours"): `instanceof InformerError` and a
 * `switch (err.reason)` hold for leader election and sharding, with the request's `operation` and `lease` beside the
 * informer's fields. Every failure of a Lease request becomes one through `LeaseError.of`, which keeps what an
 * InformerError knows (the transport's, or one a `LeaseClient` of the caller's own throws). Virtual time.
 */
import { throwError, type Observable } from 'rxjs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { testScheduler } from '../../marbles/support/testScheduler.ts';
import { InformerError, type ErrorReason } from '../../src/index.ts';
import { LeaseError, leaderElection, sharding, type LeaseClient, type LeaseClients } from '../../src/leaderelection/index.ts';

/** What a switch on the reason says: the same words for an informer's error and a Lease's. */
function advice(error: InformerError): string {
  switch (error.reason) {
    case 'Forbidden':
      return 'grant the verbs';
    case 'Conflict':
      return 'read again';
    default:
      return `retry (${error.reason})`;
  }
}

describe('LeaseError', () => {
  it('is an InformerError named LeaseError, with its operation, lease and status', () => {
    const error: unknown = new LeaseError('Forbidden', 'get', 'ctrl', 'leases is forbidden', 403);
    expect(error).toBeInstanceOf(InformerError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'LeaseError', reason: 'Forbidden', operation: 'get', lease: 'ctrl', status: 403 });
    expect((error as LeaseError).message).toBe('get lease ctrl: leases is forbidden');
    expect(String(error)).toBe('LeaseError: get lease ctrl: leases is forbidden');
    if (!(error instanceof InformerError)) throw new Error('not an InformerError');
    expect(advice(error)).toBe('grant the verbs');
    expectTypeOf<LeaseError>().toExtend<InformerError>();
    expectTypeOf<LeaseError['reason']>().toEqualTypeOf<ErrorReason>();
  });

  it('LeaseError.of keeps a LeaseError, an InformerError’s fields, and gives anything else the fallback reason', () => {
    const lease = new LeaseError('Conflict', 'update', 'ctrl', 'the object has been modified', 409);
    expect(LeaseError.of(lease, 'update', 'ctrl', 'Unknown')).toBe(lease);
    // Named again by a caller who knows more (sharding names its members' listing, `*` to the client: audit25).
    const listing = new LeaseError('Forbidden', 'list', '*', 'leases is forbidden', 403, { request: 'GET /leases' });
    expect(LeaseError.of(listing, 'list', 'g-member-*', 'Unknown')).toMatchObject({
      name: 'LeaseError',
      reason: 'Forbidden',
      status: 403,
      request: 'GET /leases',
      operation: 'list',
      lease: 'g-member-*',
      message: 'list lease g-member-*: leases is forbidden',
      cause: listing,
    });

    const transport = new InformerError('TooManyRequests', 'slow down', {
      status: 429,
      retryAfterSeconds: 3,
      request: 'PUT /apis/coordination.k8s.io/v1/namespaces/ops/leases/ctrl',
    });
    const fromTransport = LeaseError.of(transport, 'update', 'ctrl', 'Unknown');
    expect(fromTransport).toBeInstanceOf(LeaseError);
    expect(fromTransport).toMatchObject({
      reason: 'TooManyRequests',
      status: 429,
      retryAfterSeconds: 3,
      request: 'PUT /apis/coordination.k8s.io/v1/namespaces/ops/leases/ctrl',
      operation: 'update',
      lease: 'ctrl',
      message: 'update lease ctrl: slow down',
      cause: transport,
    });

    const thrown = new Error('Timeout has occurred');
    expect(LeaseError.of(thrown, 'list', 'g-member-*', 'Timeout')).toMatchObject({
      reason: 'Timeout',
      status: undefined,
      message: 'list lease g-member-*: Timeout has occurred',
      cause: thrown,
    });
    expect(LeaseError.of('a string', 'get', 'ctrl', 'Unknown')).toMatchObject({ reason: 'Unknown', message: 'get lease ctrl: a string' });
  });

  it("LeaseError.of keeps every field of an InformerError: phase, key, resourceVersion and zod's issues too", () => {
    const issues = z.object({ holderIdentity: z.string() }).safeParse({ holderIdentity: 7 }).error!.issues;
    const decoded = new InformerError('ValidationFailed', 'spec.holderIdentity: expected string', {
      phase: 'list',
      key: 'ops/ctrl',
      resourceVersion: '42',
      issues,
      statusObject: { kind: 'Status' },
      unreachable: true,
      request: 'GET /apis/coordination.k8s.io/v1/namespaces/ops/leases/ctrl',
    });
    const lease = LeaseError.of(decoded, 'get', 'ctrl', 'Unknown');
    expect(lease).toMatchObject({
      reason: 'ValidationFailed',
      operation: 'get',
      lease: 'ctrl',
      phase: 'list',
      key: 'ops/ctrl',
      resourceVersion: '42',
      issues,
      statusObject: { kind: 'Status' },
      unreachable: true,
      request: 'GET /apis/coordination.k8s.io/v1/namespaces/ops/leases/ctrl',
      message: 'get lease ctrl: spec.holderIdentity: expected string',
      cause: decoded,
    });
    expect(lease.issues?.[0]?.path).toEqual(['holderIdentity']);
    // Named again by a caller who knows more: every field still there.
    expect(LeaseError.of(lease, 'list', 'g-member-*', 'Unknown')).toMatchObject({
      phase: 'list',
      key: 'ops/ctrl',
      resourceVersion: '42',
      issues,
    });
  });

  it('forRequest() and inPhase() keep a LeaseError one, with its operation and lease (audit25)', () => {
    const error = new LeaseError('ServerError', 'get', 'ctrl', 'boom', 500);
    const named = error.forRequest('GET /apis/coordination.k8s.io/v1/namespaces/ops/leases/ctrl');
    expect(named).toBeInstanceOf(LeaseError);
    expect(named).toMatchObject({
      name: 'LeaseError',
      operation: 'get',
      lease: 'ctrl',
      status: 500,
      message: 'get lease ctrl: boom',
      request: 'GET /apis/coordination.k8s.io/v1/namespaces/ops/leases/ctrl',
    });
    expect(named.forRequest('GET /other')).toBe(named);
    const phased = error.inPhase('watch');
    expect(phased).toBeInstanceOf(LeaseError);
    expect(phased).toMatchObject({ operation: 'get', lease: 'ctrl', phase: 'watch', message: 'get lease ctrl: boom' });
  });

  it("leaderElection and sharding report a LeaseClient's own InformerError with its reason (was Unknown / Timeout)", () => {
    const denied = () => new InformerError('Forbidden', 'RBAC says no', { status: 403 });
    const fail = (): Observable<never> => throwError(denied);
    const client = (name: string): LeaseClient => ({ name, get: fail, create: fail, update: fail });
    const clients: LeaseClients = { lease: client, list: fail };
    const scheduler = testScheduler();
    const seen: string[] = [];
    scheduler.run(() => {
      const election = leaderElection(client('ctrl'), { identity: 'a', scheduler, random: () => 0 });
      const shards = sharding(clients, { name: 'g', shards: 1, identity: 'a', scheduler, random: () => 0 });
      const subs = [
        election.errors$.subscribe((e) =>
          seen.push(`election ${e.operation} ${e.lease} ${e.reason} ${e.status} ${e instanceof InformerError}`),
        ),
        shards.errors$.subscribe((e) => seen.push(`sharding ${e.operation} ${e.lease} ${e.reason} ${e.status}`)),
        election.leader$.subscribe(),
        shards.held$.subscribe(),
      ];
      scheduler.schedule(() => subs.forEach((s) => s.unsubscribe()), 10_000);
    });
    expect(seen).toContain('election get ctrl Forbidden 403 true');
    expect(seen).toContain('sharding list g-member-* Forbidden 403');
    expect(seen.filter((line) => / (Unknown|Timeout) /.test(line))).toEqual([]);
  });
});
