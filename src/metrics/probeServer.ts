import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** The probe server's bounds (see docs/operations.md, "The probe server's limits"). */
export interface ProbeServerLimits {
  /** A connection must bring a request's headers within this (ms) of opening, or of its last response; else it is closed. */
  readonly headersTimeoutMs: number;
  /** Node's own limit on a whole request (ms); no route reads a body, so the headers' limit is the one that matters. */
  readonly requestTimeoutMs: number;
  /** How often Node checks its own request limits (ms): its default, 30 s, let a slow client live 30–40 s. */
  readonly checkIntervalMs: number;
  /** Request headers larger than this (bytes) are answered 431. */
  readonly maxHeaderBytes: number;
  /** Connections open at once; more are closed as they arrive (kubelet probes and a scraper need a handful). */
  readonly maxConnections: number;
}

export const PROBE_SERVER_LIMITS: ProbeServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 10_000,
  checkIntervalMs: 1_000,
  maxHeaderBytes: 8_192,
  maxConnections: 64,
};

/** A request that says it carries a body: a length other than 0, or a transfer encoding (chunked). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/**
 * A `node:http` server for probes and scrapes, bounded against a slow or hostile client:
 *
 * - Headers within `headersTimeoutMs` of the connection opening (or of the last response on a kept-alive one), by a
 *   timer of our own: Node checks its `headersTimeout` only every `connectionsCheckingInterval`, so a slow client
 *   could hold a connection three or four times as long. Node's check stays as a second line, every `checkIntervalMs`.
 * - No body is read: a request that carries one is answered with `Connection: close` and the connection closed as
 *   soon as the answer is written (a 405 to a 200 MiB POST does not drain it; the client may see a reset).
 * - At most `maxConnections` connections; more are closed at once.
 *
 * `handle` answers; the timers are `setTimeout`/`clearTimeout` (fake timers in tests).
 */
export function probeServer(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  limits: ProbeServerLimits = PROBE_SERVER_LIMITS,
): Server {
  const waiting = new WeakMap<Socket, ReturnType<typeof setTimeout>>();
  const disarm = (socket: Socket) => {
    const timer = waiting.get(socket);
    if (timer !== undefined) clearTimeout(timer);
    waiting.delete(socket);
  };
  const arm = (socket: Socket) => {
    disarm(socket);
    if (socket.destroyed) return;
    const timer = setTimeout(() => socket.destroy(), limits.headersTimeoutMs);
    (timer as { unref?: () => void }).unref?.();
    waiting.set(socket, timer);
  };

  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
      maxHeaderSize: limits.maxHeaderBytes,
    },
    (req, res) => {
      const socket = req.socket;
      disarm(socket);
      if (hasBody(req)) {
        res.shouldKeepAlive = false;
        res.setHeader('Connection', 'close');
        res.on('finish', () => socket.destroy());
      } else {
        res.on('finish', () => arm(socket));
      }
      handle(req, res);
    },
  );
  server.maxConnections = limits.maxConnections;
  server.on('connection', (socket: Socket) => {
    arm(socket);
    socket.once('close', () => disarm(socket));
  });
  return server;
}
