import { describe, expect, it } from 'vitest';
import { InformerError } from '../../src/index.ts';
import { MAX_MESSAGE_CHARS, messageOf } from '../../src/cli/format.ts';
import { displayServer, explain } from '../../src/cli/watch.ts';
import { Http2Error } from '../../src/1-transport/http2/response.ts';

const SERVER = 'https://admin:pa55word@k8s.example.com:6443/prefix?token=q-token#frag';

describe('explain: one line a user can act on', () => {
  it('shows the server without its user info, query or fragment', () => {
    expect(displayServer(SERVER)).toBe('https://k8s.example.com:6443/prefix');
    expect(displayServer('https://k8s.example.com')).toBe('https://k8s.example.com');
    expect(displayServer('::not a url::pa55word')).toBe("(the kubeconfig's server, which is not a valid URL)");
    const line = explain(new InformerError('NetworkError', 'connect ECONNREFUSED'), SERVER);
    expect(line).toBe('cannot reach the API server at https://k8s.example.com:6443/prefix: connect ECONNREFUSED');
  });

  // audit56: a frame Node would not send (http2/request.ts's unsentFrame, an Http2Error ERR_HTTP2_FRAME_ERROR as the
  // cause: the shape longRequestHeaders.spec gets over h2) was worded "HTTP/2 failure from the API server".
  it('does not blame the API server for an HTTP/2 frame Node would not send; a server-side ProtocolError still names it', () => {
    const said = "Node could not send the request's HTTP/2 HEADERS frame (error code 6): not sent; the API server never saw the request";
    const unsent = new InformerError('ProtocolError', said, { cause: new Http2Error(said, 'ERR_HTTP2_FRAME_ERROR', true, undefined) });
    expect(explain(unsent, SERVER)).toBe(`HTTP/2 request not sent, by our side: ${said}`);
    const goaway = new InformerError('ProtocolError', 'GOAWAY', {
      cause: new Http2Error('GOAWAY', 'ERR_HTTP2_SESSION_ERROR', true, undefined),
    });
    expect(explain(goaway, SERVER)).toMatch(/^HTTP\/2 failure from the API server at https:\/\/k8s.example.com:6443\/prefix/);
  });

  it('says how long the server asked to wait (Retry-After), rounded up; nothing for none or 0', () => {
    const busy = (retryAfterSeconds?: number) =>
      new InformerError('TooManyRequests', 'Too many requests', {
        status: 429,
        ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      });
    expect(explain(busy(300), SERVER)).toBe('TooManyRequests: Too many requests (the server asked to wait 300 s before retrying)');
    expect(explain(busy(2.2), SERVER)).toBe('TooManyRequests: Too many requests (the server asked to wait 3 s before retrying)');
    expect(explain(busy(0), SERVER)).toBe('TooManyRequests: Too many requests');
    expect(explain(busy(), SERVER)).toBe('TooManyRequests: Too many requests');
  });

  it("replaces Node's --use-system-ca hint for an unknown CA by the kubeconfig's CA settings", () => {
    const error = new InformerError(
      'NetworkError',
      'list /api: DEPTH_ZERO_SELF_SIGNED_CERT self-signed certificate; if the root CA is installed locally, try running Node.js with --use-system-ca',
    );
    const line = explain(error, 'https://127.0.0.1:6443');
    expect(line).toBe(
      "cannot trust the API server at https://127.0.0.1:6443 (TLS certificate): list /api: DEPTH_ZERO_SELF_SIGNED_CERT self-signed certificate (the server's certificate is not signed by the certificate authority the kubeconfig names: check certificate-authority or certificate-authority-data)",
    );
    expect(line).not.toContain('--use-system-ca');
  });

  it("keeps the transport's own wording of a TLS failure, without a second piece of advice", () => {
    const error = new InformerError(
      'NetworkError',
      "list /api: the server's certificate is not trusted by the cluster's certificate-authority (CA) in the kubeconfig: SELF_SIGNED_CERT_IN_CHAIN",
    );
    expect(explain(error, 'https://127.0.0.1:6443')).toBe(
      `cannot trust the API server at https://127.0.0.1:6443 (TLS certificate): ${error.message}`,
    );
    const expired = new InformerError('NetworkError', "list /api: the server's certificate is not valid now: CERT_HAS_EXPIRED");
    expect(explain(expired, 'https://127.0.0.1:6443')).toBe(
      `cannot trust the API server at https://127.0.0.1:6443 (TLS certificate): ${expired.message}`,
    );
  });

  it('says a failed TLS handshake is one; only a connection that fails before TLS "cannot reach" the server', () => {
    const handshake = new InformerError(
      'NetworkError',
      'list /api: EPROTO 00E8:error:0A00010B:SSL routines:ssl3_get_record:wrong version number',
    );
    expect(explain(handshake, 'https://127.0.0.1:6443')).toBe(
      `the TLS handshake with the API server at https://127.0.0.1:6443 failed: ${handshake.message}`,
    );
    const reset = new InformerError(
      'NetworkError',
      'list /api: ECONNRESET Client network socket disconnected before secure TLS connection was established',
    );
    expect(explain(reset, 'https://127.0.0.1:6443')).toMatch(
      /^the TLS handshake with the API server at https:\/\/127\.0\.0\.1:6443 failed: /,
    );
    const refused = new InformerError('NetworkError', 'list /api: connect ECONNREFUSED 127.0.0.1:6443');
    expect(explain(refused, 'https://127.0.0.1:6443')).toBe(`cannot reach the API server at https://127.0.0.1:6443: ${refused.message}`);
  });

  it('says a connection that broke after the server answered was lost, not unreachable', () => {
    const dropped = new InformerError('NetworkError', 'watch: the connection closed mid-stream', { phase: 'watch' });
    expect(explain(dropped, 'http://127.0.0.1:8080')).toBe(
      `lost the connection to the API server at http://127.0.0.1:8080: ${dropped.message}`,
    );
    const marked = new InformerError('NetworkError', 'list /api: socket hang up', { unreachable: true });
    expect(explain(marked, 'http://127.0.0.1:8080')).toBe(`cannot reach the API server at http://127.0.0.1:8080: ${marked.message}`);
  });

  it("names the server for the transport's own request timer; a server's 504 keeps its words, with its reason once", () => {
    const silent = new InformerError('Timeout', 'list /api: no response headers within 30000 ms (waiting for: response headers)');
    expect(explain(silent, 'https://10.0.0.1:6443')).toBe(
      `the API server at https://10.0.0.1:6443 did not answer in time: ${silent.message} (check the server URL and the network to it)`,
    );
    const status = new InformerError('Timeout', 'Timeout: Too large resource version: 50, current: 49', { status: 504 });
    expect(explain(status, 'https://10.0.0.1:6443')).toBe('Timeout: Too large resource version: 50, current: 49');
    const quiet = new InformerError('Timeout', 'watch delivered nothing for 300000 ms; resuming', { phase: 'watch' });
    expect(explain(quiet, 'https://10.0.0.1:6443')).toBe(`Timeout: ${quiet.message}`);
  });

  it('says what to change for an http:// server', () => {
    const error = new InformerError(
      'Config',
      'cannot apply the KubeConfig: HTTP protocol is not allowed when skipTLSVerify is not set or false',
    );
    expect(explain(error, 'http://127.0.0.1:8080')).toBe(
      'bad kubeconfig: the server http://127.0.0.1:8080 is plain http://, which the Kubernetes client refuses unless the cluster sets insecure-skip-tls-verify: true',
    );
  });

  it('cuts a huge message (a server Status can say megabytes) to one readable line', () => {
    const huge = 'x'.repeat(2 * 1024 * 1024);
    const line = explain(new InformerError('ServerError', huge, { status: 500 }), SERVER);
    expect(line).toBe(`ServerError: ${'x'.repeat(MAX_MESSAGE_CHARS)}… (${huge.length - MAX_MESSAGE_CHARS} more characters)`);
    // Never half a surrogate pair.
    const emoji = messageOf(new Error(`${'y'.repeat(MAX_MESSAGE_CHARS - 1)}😀${'z'.repeat(10)}`));
    expect(emoji).toBe(`${'y'.repeat(MAX_MESSAGE_CHARS - 1)}… (12 more characters)`);
  });
});
