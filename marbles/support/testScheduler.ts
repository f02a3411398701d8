import { expect } from 'vitest';
import { TestScheduler } from 'rxjs/testing';

/** The TestScheduler every marble spec uses: it asserts with vitest's deep equality. */
export function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}
