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
  /**
   * Connections open at once. One more arriving at the cap closes the connection idle the longest (not being answered:
   * waiting for its first or next request) to make room, so a kubelet probe gets in however many kept-alive clients
   * hold the others; when every one is being answered, the newcomer is closed.
   */
  readonly maxConnections: number;
  /**
   * From the start of an answer (its request's headers, or, pipelined, the previous answer written) until it is all
   * written (ms): a client that does not read it is closed.
   */
  readonly responseTimeoutMs: number;
  /**
   * Requests answered on one connection: the last is answered with `Connection: close` (Node's `maxRequestsPerSocket`)
   * and the connection closed once it is written (Node 20 left it open), so a request pipelined after it is not
   * answered at all (no 503).
   */
  readonly maxRequestsPerSocket: number;
}

export const PROBE_SERVER_LIMITS: ProbeServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 10_000,
  checkIntervalMs: 1_000,
  maxHeaderBytes: 8_192,
  maxConnections: 64,
  responseTimeoutMs: 10_000,
  maxRequestsPerSocket: 100,
};

/** A request that says it carries a body: a length other than 0, or a transfer encoding (chunked). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** A request read while another on its connection was being answered: answered once that one is written. */
interface Waiting {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly last: boolean;
}

/** A connection the server holds: the timer running on it, the request being answered, those waiting for it. */
interface Held {
  timer: ReturnType<typeof setTimeout> | undefined;
  answering: boolean;
  readonly waiting: Waiting[];
  requests: number;
}

/**
 * A `node:http` server for probes and scrapes, bounded against a slow or hostile client:
 *
 * - Headers within `headersTimeoutMs` of the connection opening (or of the last response on a kept-alive one), by a
 *   timer of our own: Node checks its `headersTimeout` only every `connectionsCheckingInterval`, so a slow client
 *   could hold a connection three or four times as long. Node's check stays as a second line, every `checkIntervalMs`.
 * - One request answered at a time on a connection: one pipelined behind it waits, unanswered, until that answer is
 *   all written (Go's net/http reads the next request only then). Node parses a whole packet of pipelined requests
 *   at once and asks for every answer; 100 `GET /metrics` in one packet were 100 renders held until the close.
 * - Each answer all written within `responseTimeoutMs` of its start: a client that asks for a large answer and
 *   never reads it is closed (the answer's bytes, and the requests waiting behind it, freed).
 * - No body is read: a request that carries one is answered with `Connection: close` and the connection closed as
 *   soon as the answer is written (a 405 to a 200 MiB POST does not drain it; the client may see a reset).
 * - At most `maxConnections` connections: one more closes the one idle the longest (or, none idle, itself); at most
 *   `maxRequestsPerSocket` requests on one, the connection closed after the last.
 *
 * `handle` answers; the timers are `setTimeout`/`clearTimeout` (fake timers in tests).
 */
export function probeServer(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  limits: ProbeServerLimits = PROBE_SERVER_LIMITS,
): Server {
  // In the order of their last answer (or of their opening): the first idle one is the one idle the longest.
  const held = new Map<Socket, Held>();
  const disarm = (socket: Socket) => {
    const h = held.get(socket);
    if (h?.timer !== undefined) clearTimeout(h.timer);
    if (h) h.timer = undefined;
  };
  const arm = (socket: Socket) => {
    disarm(socket);
    const h = held.get(socket);
    if (!h || socket.destroyed) return;
    const timer = setTimeout(() => socket.destroy(), limits.headersTimeoutMs);
    (timer as { unref?: () => void }).unref?.();
    h.timer = timer;
  };
  const answer = (socket: Socket, h: Held, { req, res, last }: Waiting) => {
    disarm(socket);
    h.answering = true;
    const deadline = setTimeout(() => socket.destroy(), limits.responseTimeoutMs);
    (deadline as { unref?: () => void }).unref?.();
    res.once('close', () => clearTimeout(deadline));
    if (last) {
      res.shouldKeepAlive = false;
      res.setHeader('Connection', 'close');
      res.on('finish', () => socket.destroy());
    } else {
      res.on('finish', () => {
        clearTimeout(deadline);
        answered(socket, h);
      });
    }
    handle(req, res);
  };
  // Node's own 'finish' listener (added before ours) has already given the socket to the next response, if any.
  const answered = (socket: Socket, h: Held) => {
    h.answering = false;
    if (socket.destroyed || !held.has(socket)) return;
    const next = h.waiting.shift();
    if (next) return answer(socket, h, next);
    held.delete(socket);
    held.set(socket, h);
    arm(socket);
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
      const h: Held = held.get(socket) ?? { timer: undefined, answering: false, waiting: [], requests: 0 };
      h.requests++;
      const request = { req, res, last: hasBody(req) || h.requests >= limits.maxRequestsPerSocket };
      // Node answers in order: this response goes out after the one being written anyway.
      if (h.answering) h.waiting.push(request);
      else answer(socket, h, request);
    },
  );
  server.maxRequestsPerSocket = limits.maxRequestsPerSocket;
  server.on('connection', (socket: Socket) => {
    if (held.size >= limits.maxConnections && !makeRoom(held)) {
      socket.destroy();
      return;
    }
    const h: Held = { timer: undefined, answering: false, waiting: [], requests: 0 };
    held.set(socket, h);
    arm(socket);
    socket.once('close', () => {
      disarm(socket);
      held.delete(socket);
      h.waiting.length = 0;
    });
  });
  return server;
}

/** Closes the connection idle the longest; false when every connection is being answered. */
function makeRoom(held: Map<Socket, Held>): boolean {
  for (const [socket, h] of held) {
    if (h.answering) continue;
    if (h.timer !== undefined) clearTimeout(h.timer);
    held.delete(socket);
    socket.destroy();
    return true;
  }
  return false;
}
