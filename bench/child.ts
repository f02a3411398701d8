/**
 * One contender run, in its own process (forked by the runner with
 * --expose-gc): argv[2] is the RunConfig as JSON; the result goes back over IPC.
 */
import { Probe, type RunConfig } from './contenders/probe.ts';

const config = JSON.parse(process.argv[2] ?? '{}') as RunConfig;
const probe = new Probe(config);
process.on('uncaughtException', (error) => {
  probe.fail(error);
  setTimeout(() => process.exit(1), 100);
});
process.on('disconnect', () => process.exit(0));

switch (config.contender) {
  case 'raw':
    (await import('./contenders/raw.ts')).runRaw(config, probe);
    break;
  case 'rx':
    await (await import('./contenders/rx.ts')).runRx(config, probe, { subscribers: 1, strip: false });
    break;
  case 'rx-gzip':
    await (await import('./contenders/rx.ts')).runRx(config, probe, { subscribers: 1, strip: false, gzip: true });
    break;
  case 'rx-record':
    await (await import('./contenders/rx.ts')).runRx(config, probe, { subscribers: 1, strip: false, record: true });
    break;
  case 'rx-pb':
    await (await import('./contenders/rx.ts')).runRx(config, probe, { subscribers: 1, strip: false, lazy: true, protobuf: true });
    break;
  case 'rx-strip':
    await (await import('./contenders/rx.ts')).runRx(config, probe, { subscribers: 1, strip: true });
    break;
  case 'rx-lazy':
    await (await import('./contenders/rx.ts')).runRx(config, probe, { subscribers: 1, strip: false, lazy: true });
    break;
  case 'rx-lazy-strip':
    await (await import('./contenders/rx.ts')).runRx(config, probe, { subscribers: 1, strip: true, lazy: true });
    break;
  case 'rx-meta':
    await (await import('./contenders/rx.ts')).runRx(config, probe, { subscribers: 1, strip: true, metadata: true });
    break;
  case 'rx-100':
    await (await import('./contenders/rx.ts')).runRx(config, probe, { subscribers: 100, strip: false });
    break;
  case 'cn':
    await (await import('./contenders/clientNode.ts')).runClientNode(config, probe, { informers: 1 });
    break;
  case 'cn-100':
    await (await import('./contenders/clientNode.ts')).runClientNode(config, probe, { informers: 100 });
    break;
  default:
    probe.fail(new Error(`unknown contender ${String(config.contender)}`));
}
