/** The scripted ListWatch now lives in the public testing kit; tests import it from here too. */
export * from '../../src/testing/fakeListWatch.ts';
