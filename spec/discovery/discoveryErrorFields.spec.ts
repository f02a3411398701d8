import { describe, expect, it } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import { explain } from '../../src/cli/explain.ts';
import { DiscoveryError } from '../../src/discovery/dynamicInformers.ts';

// audit56: DiscoveryError copied the wrapped error's fields one by one and dropped `execPlugin` (and `unreachable`),
// so an `--all` session's explain() blamed the network for a discovery request still waiting on kubelogin.
describe('DiscoveryError keeps every field of the error it wraps', () => {
  const details = {
    status: 503,
    phase: 'list',
    retryAfterSeconds: 7,
    key: 'ns/name',
    resourceVersion: '42',
    issues: [],
    statusObject: { kind: 'Status' },
    unreachable: true,
    request: 'GET /apis/apps/v1',
    execPlugin: 'kubelogin',
  } as const;

  it('each detail, the cause, and the group version', () => {
    const inner = new InformerError('Timeout', 'no answer', details);
    const wrapped = new DiscoveryError(inner, 'apps/v1');
    for (const [name, value] of Object.entries(details)) expect([name, wrapped[name as keyof typeof details]]).toEqual([name, value]);
    expect(wrapped.cause).toBe(inner);
    expect(wrapped.groupVersion).toBe('apps/v1');
  });

  it('a discovery Timeout waiting on an exec plugin is explained as the plugin, not the network', () => {
    const timeout = new InformerError(
      'Timeout',
      'GET /apis: no response headers within 30000 ms (waiting for: credentials from exec plugin kubelogin)',
      { phase: 'list', execPlugin: 'kubelogin', request: 'GET /apis' },
    );
    expect(explain(new DiscoveryError(timeout), 'https://k8s.example:6443')).toContain('exec plugin kubelogin gave no credential');
  });
});
