/**
 * The controller's room (src/controller/room.ts): at most `concurrency` reconciles at once, abandoned ones still
 * settling included; a slot waits for room before it asks the queue for a key, and holds it while it waits.
 */
import { Subject, of, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Room } from '../../src/controller/room.ts';

/** A slot: asks for a key through the room; a key it gets starts a reconcile (as processItems' slot runs it). */
function slot(room: Room, take: () => Observable<string>) {
  const got: string[] = [];
  let finish: (() => void) | undefined;
  let completed = false;
  const subscription = room.whenRoom(take).subscribe({
    next: (key) => {
      got.push(key);
      finish = room.started();
    },
    complete: () => (completed = true),
  });
  return { got, finish: () => finish?.(), subscription, completed: () => completed };
}

describe('Room', () => {
  it('a reconcile still settling keeps its room: a second slot of size 1 waits for it, then takes its key', () => {
    const room = new Room(1);
    const abandoned = room.started();
    let asked = 0;
    const keys = new Subject<string>();
    const s = slot(room, () => (asked++, keys));
    expect(asked).toBe(0); // no key asked while there is no room
    abandoned();
    expect(asked).toBe(1);
    keys.next('a');
    expect(s.got).toEqual(['a']);
    expect(room.active).toBe(1);
  });

  it('a slot waiting for a key holds its room: of two slots and size 1, the second waits until the first ends', () => {
    const room = new Room(1);
    const first = new Subject<string>();
    const a = slot(room, () => first);
    let asked = 0;
    const b = slot(room, () => (asked++, of('b')));
    expect(asked).toBe(0);
    first.next('a'); // the reservation becomes a's reconcile: still no room for b
    expect(asked).toBe(0);
    a.finish();
    expect(b.got).toEqual(['b']);
    expect(room.active).toBe(1);
  });

  it('a wait given up (unsubscribed, or the queue shut down: no key) gives its room back; an ended reconcile frees it once', () => {
    const room = new Room(1);
    const a = slot(room, () => new Subject<string>());
    let asked = 0;
    const b = slot(room, () => (asked++, new Subject<string>()));
    a.subscription.unsubscribe();
    expect(asked).toBe(1);
    b.subscription.unsubscribe();
    const c = slot(room, () => of()); // an empty get(): completes, room back
    expect(c.completed()).toBe(true);
    const d = slot(room, () => of('d'));
    d.finish();
    d.finish(); // twice: counted once
    expect(room.active).toBe(0);
    const e = slot(room, () => of('e'));
    expect(e.got).toEqual(['e']);
  });
});
