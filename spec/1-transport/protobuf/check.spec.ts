import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkMessage } from '../../../src/1-transport/protobuf/check.ts';
import { allMessages, message, type Message } from '../../../src/1-transport/protobuf/schema.ts';
import { decodeInto } from '../../../src/1-transport/protobuf/values.ts';
import { begin, pos, release } from '../../../src/1-transport/protobuf/wire.ts';
import { encodeMessage } from '../../../packages/emulator/src/protobuf/encode.ts';
import { message as emulatorMessage } from '../../../packages/emulator/src/protobuf/schema.ts';
import { makePod } from '../../../bench/workload/pods.ts';
import { Generator, type Json } from './generated.ts';
import { referenceCheckMessage } from './referenceCheck.ts';

/**
 * Issue #36: the never-a-wrong-object walk, specialised per message (check.ts), gives the verdict the generic walk it
 * replaced gives (referenceCheck.ts, kept as the reference): the same fault, with the same message and byte offset,
 * or none, over valid messages of every type the schema knows and the same with bytes overwritten, cut or inserted.
 */
type Verdict = string;

function verdict(walk: (end: number, msg: Message | undefined) => void, bytes: Buffer, msg: Message | undefined): Verdict {
  begin(bytes, 0);
  try {
    walk(bytes.length, msg);
    return pos === bytes.length ? 'ok' : `stopped at ${pos}`;
  } catch (error) {
    return `${(error as Error).constructor.name}: ${(error as Error).message}`;
  } finally {
    release(undefined);
  }
}

const MESSAGES = allMessages().map((m) => m.name);
const encode = (name: string, value: Json) => encodeMessage(emulatorMessage(name), value).done();
const generated = (name: string, seed: number) => encode(name, new Generator(seed).message(message(name), 0));

/** A mutation of `bytes`: overwritten bytes, a cut, an insertion (what a hostile server or a broken proxy sends). */
const mutations = fc.oneof(
  fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }).map((edits) => (bytes: Buffer) => {
    const out = Buffer.from(bytes);
    if (out.length > 0) for (const [at, byte] of edits) out[at % out.length] = byte;
    return out;
  }),
  fc.nat().map((at) => (bytes: Buffer) => bytes.subarray(0, bytes.length === 0 ? 0 : at % bytes.length)),
  fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 6 })).map(([at, inserted]) => (bytes: Buffer) => {
    const cut = bytes.length === 0 ? 0 : at % bytes.length;
    return Buffer.concat([bytes.subarray(0, cut), inserted, bytes.subarray(cut)]);
  }),
);

function sameVerdict(name: string, bytes: Buffer): boolean {
  const msg = message(name);
  const expected = verdict(referenceCheckMessage, bytes, msg);
  const actual = verdict(checkMessage, bytes, msg);
  if (actual !== expected) throw new Error(`${name}: ${actual}, the reference: ${expected} (bytes ${bytes.toString('hex')})`);
  return true;
}

/** What the walk accepts, the eager decode decodes without an error (the rule the walk is for). */
function decodesWhenAccepted(name: string, bytes: Buffer): boolean {
  if (verdict(checkMessage, bytes, message(name)) !== 'ok') return true;
  begin(bytes, 0);
  try {
    decodeInto({}, bytes.length, message(name));
  } finally {
    release(undefined);
  }
  return true;
}

const seeds = fc.integer({ min: 1, max: 2 ** 30 });

/** A length as a varint. */
function lengthOf(n: number): Buffer {
  const out: number[] = [];
  for (; n >= 0x80; n >>>= 7) out.push((n & 0x7f) | 0x80);
  out.push(n);
  return Buffer.from(out);
}

describe('the walk specialised per message gives the reference walk’s verdicts', () => {
  it('property: a valid message of every type the schema knows is accepted by both', () => {
    for (const name of MESSAGES) expect(verdict(checkMessage, generated(name, MESSAGES.indexOf(name) + 1), message(name))).toBe('ok');
    fc.assert(
      fc.property(fc.constantFrom(...MESSAGES), seeds, (name, seed) => sameVerdict(name, generated(name, seed))),
      { numRuns: 1500 },
    );
  });

  it('property: a message of every type, mutated (bytes overwritten, cut or inserted), gets the same fault or none', () => {
    fc.assert(
      fc.property(fc.constantFrom(...MESSAGES), seeds, mutations, (name, seed, mutate) => {
        const bytes = mutate(generated(name, seed));
        return sameVerdict(name, bytes) && decodesWhenAccepted(name, bytes);
      }),
      { numRuns: 6000 },
    );
  });

  it('property: the bench workload’s pods, mutated, get the same fault or none (and the unmutated ones pass)', () => {
    fc.assert(
      fc.property(fc.nat({ max: 999 }), fc.nat({ max: 3 }), mutations, (index, revision, mutate) => {
        const pod = encode('Pod', makePod({ index, resourceVersion: index + 1, revision }) as Json);
        expect(verdict(checkMessage, pod, message('Pod'))).toBe('ok');
        return sameVerdict('Pod', mutate(pod)) && decodesWhenAccepted('Pod', mutate(pod));
      }),
      { numRuns: 1500 },
    );
  });

  // FieldsV1 as a server writes it (objects of objects, no spaces) is checked by a path of its own, anything else by the
  // general JSON scanner: texts made of FieldsV1's pieces and of what that path must not take get the reference's verdict.
  it('property: FieldsV1 texts, compact or not, valid or not, get the reference’s verdict (and decode when accepted)', () => {
    const keys = ['"f:a"', '"."', String.raw`"k:{\"name\":\"app\"}"`, String.raw`"\\"`, String.raw`"\/\b\f\n\r\t"`, '"é"', '""'];
    const rare = [String.raw`"\u0041"`, String.raw`"\u00"`, String.raw`"\x"`, '"\x01"', '"a', ' ', '\n', '[]', '1', 'null', '"s"'];
    const pieces = [...keys, ...rare, '{', '}', '{}', ',', ':', '"', '\\', '[', ']'];
    // Objects of objects, now and then with a rare piece where a key, a value or a separator goes.
    const { object } = fc.letrec<{ object: string; key: string }>((tie) => ({
      key: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...keys) }, fc.constantFrom(...rare)),
      object: fc.oneof(
        { weight: 2, arbitrary: fc.constant('{}') },
        fc.constantFrom(...rare),
        fc
          .array(fc.tuple(tie('key'), fc.constantFrom(':', ':', ':', ': '), tie('object')), { minLength: 1, maxLength: 3 })
          .chain((members) =>
            fc.constantFrom(',', ',', ',', ' ,').map((comma) => `{${members.map(([k, colon, v]) => `${k}${colon}${v}`).join(comma)}}`),
          ),
      ),
    }));
    const texts = fc.oneof(
      object,
      fc.array(fc.constantFrom(...pieces), { maxLength: 24 }).map((parts) => parts.join('')),
      fc.constantFrom('{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"k:{\\"name\\":\\"c\\"}":{".":{},"f:image":{}}}}'),
    );
    // After the raw bytes, in the same FieldsV1, bytes of JSON's punctuation (unknown fields, or not protobuf at all): a
    // read past the raw's end sees JSON that could close or go on with what the raw left open.
    const trailers = fc.constantFrom('', '"', '{', '}', ':', ',', '"a":{}}', '{}}', ':{}}', '}}}}');
    const entry = (json: Buffer, trailer: string) => {
      const fieldsV1 = Buffer.concat([Buffer.from([0x0a]), lengthOf(json.length), json, Buffer.from(trailer)]);
      return Buffer.concat([Buffer.from([0x3a]), lengthOf(fieldsV1.length), fieldsV1]);
    };
    fc.assert(
      fc.property(texts, fc.option(mutations, { nil: undefined }), trailers, (text, mutate, trailer) => {
        const json = mutate ? mutate(Buffer.from(text)) : Buffer.from(text);
        return sameVerdict('ManagedFieldsEntry', entry(json, trailer)) && decodesWhenAccepted('ManagedFieldsEntry', entry(json, trailer));
      }),
      { numRuns: 5000 },
    );
    // Nesting to the scanner's limit and one past it; a value after the object; objects left open or closed once too often.
    const nested = (n: number) => '{"a":'.repeat(n - 1) + '{}' + '}'.repeat(n - 1);
    for (const json of [nested(10_000), nested(10_001), '{}{}', '{"a":{}', '{"a":{}}}', '{"a":', '{', '{"a":{},'])
      for (const trailer of ['', '{}}', ':{}}']) expect(sameVerdict('ManagedFieldsEntry', entry(Buffer.from(json), trailer))).toBe(true);
  });

  it('every fault the walk reports, by example, with its message and byte offset', () => {
    const pod = message('Pod');
    const cases: [string, number[], Message | undefined, string][] = [
      ['a known field in another wire type', [0x08, 0x01], message('ObjectMeta'), 'field name: wire type 0 at byte 1'],
      [
        'a map key in another wire type',
        [0x62, 0x02, 0x08, 0x01],
        message('ObjectMeta'),
        'map annotations: a key of wire type 0 at byte 3',
      ],
      [
        'a map value in another wire type',
        [0x62, 0x02, 0x10, 0x01],
        message('ObjectMeta'),
        'map annotations: a value of wire type 0 at byte 3',
      ],
      // A key's tag of 5 bytes whose low 32 bits are 0x0a: field 1, wire type 2 to `tag >>> 3`, not to the decode.
      [
        'a map key tag over 32 bits',
        [0x62, 0x06, 0x8a, 0x80, 0x80, 0x80, 0x10, 0x00],
        message('ObjectMeta'),
        'map annotations: a key of wire type 2 at byte 7',
      ],
      ['a packed varint cut short', [0x0a, 0x02, 0x80, 0x80], message('PodPortForwardOptions'), 'truncated varint at byte 4'],
      [
        'a time out of range',
        [0x42, 0x07, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
        message('ObjectMeta'),
        'a time out of range (4398046511103 s) at byte 9',
      ],
      ['FieldsV1 that is not JSON', [0x3a, 0x03, 0x0a, 0x01, 0x7b], message('ManagedFieldsEntry'), 'raw bytes that are not JSON at byte 4'],
      ['a length past its message', [0x12, 0x05, 0x0a], pod, 'length 5 past the end of its message (1 bytes left) at byte 2'],
      ['an unknown field of a wire type no field has', [0xfb, 0x01], pod, 'wire type 3 at byte 2'],
      ['a truncated varint', [0x08, 0x80], undefined, 'truncated varint at byte 2'],
    ];
    for (const [what, bytes, msg, expected] of cases) {
      const reference = verdict(referenceCheckMessage, Buffer.from(bytes), msg);
      expect(verdict(checkMessage, Buffer.from(bytes), msg), what).toBe(reference);
      expect(reference, what).not.toBe('ok');
      if (expected !== '') expect(reference, what).toBe(`ProtobufError: protobuf: ${expected}`);
    }
  });

  // The walk reads one-byte tags, varints and lengths (of strings and nested messages) in place: at a message's end (the buffer's, or a nested
  // message's with bytes after it), exactly where the reference reads past it or does not.
  it('the in-place reads at a message’s end, by example: the reference’s verdict, fault or none', () => {
    const meta = message('ObjectMeta');
    // name (1, a string), generation (7, a varint), ownerReferences (13, a message: name 3, controller 6).
    const cases: [string, number[], boolean][] = [
      ['a string filling the message', [0x0a, 0x02, 0x61, 0x62], true],
      ['a string one byte past the end', [0x0a, 0x03, 0x61, 0x62], false],
      ['a string’s length missing', [0x0a], false],
      ['a string of length 0 at the end', [0x0a, 0x00], true],
      ['a string of 128 bytes (a two-byte length)', [0x0a, 0x80, 0x01, ...Buffer.alloc(128, 0x61)], true],
      ['a two-byte length one past the end', [0x0a, 0x80, 0x01, ...Buffer.alloc(127, 0x61)], false],
      ['a one-byte varint at the end', [0x38, 0x05], true],
      ['a varint missing', [0x38], false],
      ['a varint cut after its first byte', [0x38, 0x85], false],
      ['a two-byte varint', [0x38, 0x85, 0x01], true],
      ['a tag cut after its first byte', [0x0a, 0x01, 0x61, 0x80], false],
      ['a nested string filling the nested message', [0x6a, 0x03, 0x1a, 0x01, 0x61, 0x0a, 0x01, 0x62], true],
      ['a nested string past the nested end, within the outer', [0x6a, 0x03, 0x1a, 0x02, 0x61, 0x0a, 0x01, 0x62], false],
      ['a nested varint past the nested end, within the outer', [0x6a, 0x01, 0x30, 0x01, 0x0a, 0x01, 0x62], false],
      ['a nested varint filling the nested message', [0x6a, 0x02, 0x30, 0x01, 0x0a, 0x01, 0x62], true],
      ['a nested tag’s length at the nested end', [0x6a, 0x01, 0x1a, 0x00, 0x0a, 0x01, 0x62], false],
      ['a nested message filling the message', [0x6a, 0x02, 0x1a, 0x00], true],
      ['a nested message one byte past the end', [0x6a, 0x03, 0x1a, 0x00], false],
      ['a nested message’s length missing', [0x6a], false],
    ];
    for (const [what, bytes, valid] of cases) {
      const reference = verdict(referenceCheckMessage, Buffer.from(bytes), meta);
      expect(reference === 'ok', what).toBe(valid);
      expect(verdict(checkMessage, Buffer.from(bytes), meta), what).toBe(reference);
    }
  });
});
