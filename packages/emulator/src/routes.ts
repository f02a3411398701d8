/**
 * URL routing: discovery paths and resource paths
 * (`/api/v1/namespaces/NS/pods/NAME/status`, `/apis/G/V/plural`, legacy `/watch/…`).
 */
import type { ResourceDef, ResourceRegistry } from './resources.ts';

export interface Route {
  kind: 'api' | 'core' | 'apis' | 'group' | 'groupVersion' | 'version' | 'health' | 'resource' | 'notFound';
  group?: string;
  version?: string;
  def?: ResourceDef;
  namespace?: string;
  name?: string;
  subresource?: string;
  watchPath?: boolean;
}

export function route(registry: ResourceRegistry, pathname: string): Route {
  const seg = pathname
    .split('/')
    .filter((s) => s !== '')
    .map((s) => decodeURIComponent(s));
  if (seg.length === 0) return { kind: 'notFound' };
  if (seg[0] === 'version' && seg.length === 1) return { kind: 'version' };
  if ((seg[0] === 'healthz' || seg[0] === 'livez' || seg[0] === 'readyz') && seg.length === 1) return { kind: 'health' };
  let group: string;
  let version: string;
  let rest: string[];
  if (seg[0] === 'api') {
    if (seg.length === 1) return { kind: 'api' };
    if (seg[1] !== 'v1') return { kind: 'notFound' };
    if (seg.length === 2) return { kind: 'core' };
    group = '';
    version = 'v1';
    rest = seg.slice(2);
  } else if (seg[0] === 'apis') {
    if (seg.length === 1) return { kind: 'apis' };
    if (seg.length === 2) return { kind: 'group', group: seg[1]! };
    if (seg.length === 3) return { kind: 'groupVersion', group: seg[1]!, version: seg[2]! };
    group = seg[1]!;
    version = seg[2]!;
    rest = seg.slice(3);
  } else return { kind: 'notFound' };
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces' && rest.length >= 3 && registry.get(group, version, rest[2]!)?.namespaced) {
    if (rest.length > 5) return { kind: 'notFound' };
    const def = registry.get(group, version, rest[2]!)!;
    return { kind: 'resource', group, version, def, namespace: rest[1], name: rest[3], subresource: rest[4], watchPath };
  }
  const def = rest[0] !== undefined ? registry.get(group, version, rest[0]) : undefined;
  if (!def || rest.length > 3) return { kind: 'notFound', group, version };
  if (def.namespaced && rest.length > 1) return { kind: 'notFound', group, version };
  return { kind: 'resource', group, version, def, name: rest[1], subresource: rest[2], watchPath };
}
