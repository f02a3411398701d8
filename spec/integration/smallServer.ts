import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

/** A scripted reply: the test decides what each request gets. */
export type Reply = (request: http.IncomingMessage, response: http.ServerResponse, url: URL) => void;

/**
 * A tiny HTTP server on 127.0.0.1 for transport-level tests: every request is
 * recorded and answered by the next scripted reply (or the fallback).
 */
export async function smallServer(fallback: Reply) {
  const replies: Reply[] = [];
  const requests: URL[] = [];
  const open = new Set<http.ServerResponse>();
  /** The client port each request came from (one port, one connection). */
  const ports: number[] = [];
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    requests.push(url);
    ports.push(request.socket.remotePort ?? -1);
    open.add(response);
    response.on('close', () => open.delete(response));
    (replies.shift() ?? fallback)(request, response, url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'small', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'small', cluster: 'small', user: 'u' }],
    currentContext: 'small',
  });
  return {
    kc,
    requests,
    ports,
    /** Responses still open (watches). */
    open,
    reply(...next: Reply[]) {
      replies.push(...next);
    },
    async close() {
      for (const response of open) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function json(status: number, body: unknown): Reply {
  return (_request, response) => {
    response.writeHead(status, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(body) + '\n');
  };
}

export function configMap(name: string, resourceVersion: string, data: Record<string, string> = {}, namespace = 'default') {
  return { metadata: { name, namespace, resourceVersion, uid: `uid-${name}` }, data };
}
