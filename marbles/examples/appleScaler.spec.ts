/**
 * Testing a controller with marbles: the informers are fed from marble
 * diagrams, the client is faked with cold Observables, and backoff and
 * requeueAfter show up as frames in virtual time — no sleeps, no cluster.
 */
import { describe, expect, it } from 'vitest';
import { testScheduler } from '../support/testScheduler.ts';
import { map, throwError } from 'rxjs';
import { Deployment } from '../../src/index.ts';
import { type ReconcileOutcome } from '../../src/controller/index.ts';
import { added, fakeInformer, kubeObj, listed, modified } from '../../src/testing/index.ts';
import { MyApples, RECHECK_MS, appleScaler, type AppleClient, type MyApple } from './appleScaler.ts';

const apple = (quantity: number, generation = 1) =>
  kubeObj<MyApple>('red', { namespace: 'fruit', generation, resourceVersion: String(10 + generation), spec: { color: 'red', quantity } });
const deployment = (replicas: number, readyReplicas: number, rv: string) =>
  kubeObj<Deployment>('apple-red', {
    namespace: 'fruit',
    resourceVersion: rv,
    owner: { kind: 'MyApple', name: 'red', apiVersion: 'stable.example.com/v1' },
    spec: { replicas },
    status: { readyReplicas },
  });
const brief = (o: ReconcileOutcome) =>
  o.result === 'requeueAfter' ? `after ${o.delayMs}` : o.result === 'error' ? `error #${o.requeues}` : o.result;

describe('apple scaler (a worked example)', () => {
  it('creates the deployment, then looks again until it is ready', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const apples = fakeInformer(MyApples, cold('l', { l: listed('10', apple(3)) }));
      // The deployment shows up (not ready) at 10 ms, and is ready at 40 s.
      const deployments = fakeInformer(
        Deployment,
        cold('l 9ms a 39990ms r', { l: listed('10'), a: added(deployment(3, 0, '20')), r: modified(deployment(3, 3, '21')) }),
      );
      const created: string[] = [];
      const client: AppleClient = {
        createDeployment: (namespace, d) => cold('--x|').pipe(map(() => created.push(`${namespace}/${(d as Deployment).metadata.name}`))),
        scaleDeployment: () => cold('x|'),
      };
      const ctl = appleScaler(apples, deployments, client, { scheduler });
      // 3 ms: created (the write took 3 frames) → look again in 30 s; 10 ms: the deployment appeared (owned) → not ready;
      // 30.003 s: the first recheck, still not ready; 40.001 s: ready (owned update) → done.
      expectObservable(ctl.outcomes$.pipe(map(brief)), '^ 60s !').toBe('3ms a 6ms b 29992ms c 9997ms d', {
        a: `after ${RECHECK_MS}`,
        b: `after ${RECHECK_MS}`,
        c: `after ${RECHECK_MS}`,
        d: 'success',
      });
      scheduler.flush();
      expect(created).toEqual(['fruit/apple-red']);
    });
  });

  it('scales when the apple’s quantity changes, retrying failed writes with backoff', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const apples = fakeInformer(MyApples, cold('l 99ms m', { l: listed('10', apple(3)), m: modified(apple(5, 2)) }));
      const deployments = fakeInformer(Deployment, cold('l', { l: listed('20', deployment(3, 3, '20')) }));
      let attempts = 0;
      const client: AppleClient = {
        createDeployment: () => cold('x|'),
        // The API server refuses twice, then accepts.
        scaleDeployment: () => (++attempts <= 2 ? throwError(() => new Error('503')) : cold('x|')),
      };
      const ctl = appleScaler(apples, deployments, client, { scheduler });
      // 0: in line; 100: quantity 5 → scale fails; retried after 5 ms, fails, then after 10 ms → scaled (at 116).
      expectObservable(ctl.outcomes$.pipe(map(brief)), '^ 1s !').toBe('s 99ms e 4ms f 10ms a', {
        s: 'success',
        e: 'error #1',
        f: 'error #2',
        a: `after ${RECHECK_MS}`,
      });
    });
  });
});
