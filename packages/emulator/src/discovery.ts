/**
 * Discovery documents: /api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>
 * (01a–01d, 07b), computed from the registry so custom resources show up when registered.
 */
import { BUILTIN_GROUP_ORDER, type ResourceDef, type ResourceRegistry, storageVersionHash } from './resources.ts';

function resourceEntries(defs: ResourceDef[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const d of [...defs].sort((a, b) => (a.plural < b.plural ? -1 : a.plural > b.plural ? 1 : 0))) {
    const e: Record<string, unknown> = {
      name: d.plural,
      singularName: d.singular,
      namespaced: d.namespaced,
      kind: d.kind,
      verbs: [...d.verbs],
    };
    if (d.shortNames.length) e['shortNames'] = [...d.shortNames];
    if (d.categories.length) e['categories'] = [...d.categories];
    e['storageVersionHash'] = storageVersionHash(d.group, d.version, d.kind);
    out.push(e);
    if (d.statusSubresource) {
      out.push({ name: `${d.plural}/status`, singularName: '', namespaced: d.namespaced, kind: d.kind, verbs: ['get', 'patch', 'update'] });
    }
  }
  return out;
}

export function apiVersions(serverAddress: string): unknown {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

export function coreResourceList(registry: ResourceRegistry): unknown {
  const defs = registry.all().filter((d) => d.group === '' && d.version === 'v1');
  return { kind: 'APIResourceList', groupVersion: 'v1', resources: resourceEntries(defs) };
}

interface GroupInfo {
  name: string;
  versions: string[];
}

function groups(registry: ResourceRegistry): GroupInfo[] {
  const byName = new Map<string, GroupInfo>();
  for (const d of registry.all()) {
    if (d.group === '') continue;
    let g = byName.get(d.group);
    if (!g) byName.set(d.group, (g = { name: d.group, versions: [] }));
    if (!g.versions.includes(d.version)) g.versions.push(d.version);
  }
  const rank = (n: string): number => {
    const i = BUILTIN_GROUP_ORDER.indexOf(n);
    return i >= 0 ? i : BUILTIN_GROUP_ORDER.length;
  };
  // Built-in groups in the server's order, then custom groups in registration order.
  return [...byName.values()].sort((a, b) => rank(a.name) - rank(b.name));
}

function groupEntry(g: GroupInfo): Record<string, unknown> {
  const versions = g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v }));
  return { name: g.name, versions, preferredVersion: versions[0] };
}

export function apiGroupList(registry: ResourceRegistry): unknown {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups(registry).map(groupEntry) };
}

export function apiGroup(registry: ResourceRegistry, name: string): unknown | undefined {
  const g = groups(registry).find((x) => x.name === name);
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(g) } : undefined;
}

export function groupResourceList(registry: ResourceRegistry, group: string, version: string): unknown | undefined {
  const defs = registry.all().filter((d) => d.group === group && d.version === version);
  if (defs.length === 0) return undefined;
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources: resourceEntries(defs) };
}

export function versionInfo(): unknown {
  return {
    major: '1',
    minor: '20',
    gitVersion: 'v1.20.2-rx-informer-emulator',
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2021-01-13T13:20:00Z',
    goVersion: 'go1.15.5',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}
