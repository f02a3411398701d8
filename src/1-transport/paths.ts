import type { Resource } from '../0-model/resources.ts';

/** Where a ListWatch points: a resource, optionally one namespace, and selectors. */
export interface ListWatchTarget {
  /** With its `kind` (optional), protobuf can be asked for it (`HttpTransportOptions.encoding`). */
  readonly resource: Pick<Resource, 'group' | 'version' | 'plural' | 'namespaced' | 'metadataOnly'> & { readonly kind?: string };
  /** One namespace; omit (or `''`) for all namespaces. Ignored for cluster-scoped resources. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

/** `/api/v1/namespaces/ns/pods`, `/apis/apps/v1/deployments`, … */
export function collectionPath(target: ListWatchTarget): string {
  const { resource, namespace } = target;
  const base = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
  const scoped = resource.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${scoped}/${resource.plural}`;
}

/** The query string of a list or watch request: selectors first, then the given options, in a stable order. */
export function queryString(target: ListWatchTarget, options: Readonly<Record<string, string | number | boolean | undefined>>): string {
  const params = new URLSearchParams();
  if (target.labelSelector) params.set('labelSelector', target.labelSelector);
  if (target.fieldSelector) params.set('fieldSelector', target.fieldSelector);
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined || value === '' || value === false) continue;
    params.set(name, value === true ? 'true' : String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * The URL of a request for `path` (a collection path and its query string) on `server`, built as client-go's rest client
 * builds it (NewRESTClient, rest/client.go): the server's path is a prefix (a proxy that moved the API server under
 * `/a/b`), its query and fragment are dropped (a request's query is its own). Appending `path` to the server's text put
 * it after a query (`https://h/?access_token=…` asked for `/`), so the path is set on the parsed URL instead.
 */
export function requestUrl(server: string, path: string): URL {
  const url = new URL(server);
  const at = path.indexOf('?');
  url.pathname = url.pathname.replace(/\/+$/, '') + (at < 0 ? path : path.slice(0, at));
  url.search = at < 0 ? '' : path.slice(at);
  url.hash = '';
  return url;
}
