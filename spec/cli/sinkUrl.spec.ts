import { describe, expect, it } from 'vitest';
import { BAD_PORTS, parseSinkUrl } from '../../src/cli/sinkUrl.ts';

describe('parseSinkUrl', () => {
  it('turns userinfo into a Basic Authorization header and keeps it out of the URL and the origin', () => {
    const r = parseSinkUrl('--webhook', 'https://us%40er:p%3Ass@hooks.example.com:8443/p/T0K3N?sig=abc');
    expect(r).toEqual({
      ok: true,
      target: {
        url: 'https://hooks.example.com:8443/p/T0K3N?sig=abc',
        origin: 'https://hooks.example.com:8443',
        headers: { authorization: `Basic ${Buffer.from('us@er:p:ss').toString('base64')}` },
      },
    });
  });

  it('refuses what is not an absolute http(s) URL, without repeating it', () => {
    for (const [raw, error] of [
      ['not-a-url', '--webhook needs an absolute http:// or https:// URL; the value given is not a URL'],
      ['ftp://u:secret@host/x', '--webhook needs an http:// or https:// URL, not ftp:'],
      ['file:///etc/passwd', '--webhook needs an http:// or https:// URL, not file:'],
      ['http://u:%E0%A4%A@host/', '--webhook: the user name or password in the URL is not valid percent-encoding'],
    ] as const) {
      expect(parseSinkUrl('--webhook', raw)).toEqual({ ok: false, error });
    }
  });

  it('refuses a port fetch will never connect to (the WHATWG bad ports), instead of retrying it forever', async () => {
    for (const raw of ['http://127.0.0.1:1/x', 'https://hooks.example.com:6000/x', 'http://u:secret@host:10080/']) {
      const port = new URL(raw).port;
      expect(parseSinkUrl('--webhook', raw)).toEqual({
        ok: false,
        error: `--webhook: port ${port} is one that fetch refuses to connect to (a "bad port" in the WHATWG Fetch standard, kept for other protocols); use another port`,
      });
    }
    expect(parseSinkUrl('--slack', 'http://127.0.0.1:6001/x').ok).toBe(true);
    // The list is fetch's own: each of its ports fails before any connection; a port next to one does not.
    for (const port of BAD_PORTS) {
      await expect(fetch(`http://127.0.0.1:${port}/`, { method: 'POST' }), port).rejects.toThrow(
        expect.objectContaining({ cause: expect.objectContaining({ message: 'bad port' }) }),
      );
    }
  });
});
