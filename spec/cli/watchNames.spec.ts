/**
 * What `rx-informer watch NAME` says when discovery does not know NAME (src/cli/watch.ts resolveResources), against
 * the emulator. audit28: a name a group version discovery could not read may serve was told to "install its CRD"
 * (installed, and only unreadable for now), and `watch all` (kubectl's `get all` category) was told the same.
 */
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { UsageError, resolveResources } from '../../src/cli/watch.ts';
import { discover } from '../../src/discovery/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const MyApples = { group: 'stable.example.com', version: 'v1', plural: 'myapples', kind: 'MyApple', shortNames: ['ma'] };

/** The message `watch names…` fails with (undefined: it resolves). */
function refusal(found: Awaited<ReturnType<typeof read>>, ...names: string[]): string | undefined {
  try {
    resolveResources(found, { resources: names, all: false });
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
}
const read = () => firstValueFrom(discover(api!.kubeConfig));

describe('watch NAME that discovery does not know', () => {
  it('a group version that may serve it could not be read: GroupDiscoveryFailed, naming it, not "install its CRD"', async () => {
    api = await startApiServer({ resources: [MyApples] });
    api.faults.add({ match: { path: '/apis/stable.example.com/v1' }, fault: { type: 'status', code: 503 }, times: Infinity });
    const found = await read();
    for (const name of ['myapples', 'ma', 'myapples.stable.example.com']) {
      const message = refusal(found, name);
      expect(message).toBe(
        `"${name}" is not among the resources discovery read; it could not read stable.example.com/v1 (ServerError), which may serve it` +
          ' (try again once it answers)',
      );
    }
    // A name of another group: that failure cannot serve it, so it is unknown, with the usual hint.
    expect(refusal(found, 'myapples.other.example.com')).toContain('a custom resource is served once its CRD is installed');
  });

  it('`all` (kubectl get all) and other categories: named as categories with their members, and --all suggested', async () => {
    api = await startApiServer({ resources: [MyApples] });
    const found = await read();
    const all = refusal(found, 'all');
    expect(all).toMatch(/^"all" is a category of resources \(.*pods.*\), not a resource: name them, or use --all to watch every resource$/);
    expect(all).not.toContain('install');
    expect(refusal(found, 'api-extensions')).toBe(
      '"api-extensions" is a category of resources (customresourcedefinitions), not a resource: name them, or use --all to watch every resource',
    );
    // A name that is no category keeps the usual message.
    expect(refusal(found, 'nothing-like-it')).toContain('the server doesn\'t have a resource type "nothing-like-it"');
  });
});
