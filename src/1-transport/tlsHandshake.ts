import type { TLSSocket } from 'node:tls';

// The TLS handshake's own bound, as client-go's transport has (`TLSHandshakeTimeout: 10 * time.Second`,
// k8s.io/client-go/transport/cache.go): a server or middlebox that accepts TCP and never finishes the handshake
// fails the connection after it, not after the request's whole `requestTimeoutMs`.

/** The code of the error a TLS socket is destroyed with when its handshake outlasts its bound. */
export const TLS_HANDSHAKE_TIMEOUT = 'ERR_TLS_HANDSHAKE_TIMEOUT';

/**
 * Destroys `socket` with a {@link TLS_HANDSHAKE_TIMEOUT} error when its handshake is not done `ms` after TCP connected
 * (Go's timer starts there too, in `persistConn.addTLS`). Undefined `ms`: no bound. The timer is a `setTimeout` (so
 * the request's fake clock moves it in tests), cleared at `secureConnect` or when the socket closes.
 */
export function limitHandshake(socket: TLSSocket, ms: number | undefined): void {
  if (ms === undefined) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const clear = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  const arm = () => {
    if (socket.destroyed) return;
    timer = setTimeout(() => {
      timer = undefined;
      socket.destroy(Object.assign(new Error(`TLS handshake not done within ${ms} ms`), { code: TLS_HANDSHAKE_TIMEOUT }));
    }, ms);
  };
  if (socket.connecting) socket.once('connect', arm);
  else arm();
  socket.once('secureConnect', clear);
  socket.once('close', clear);
}
