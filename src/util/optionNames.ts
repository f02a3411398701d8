/**
 * What a caller gave, described for an error message, and the check of an options object's member names: the one
 * helper every entry that takes an options object uses (informers, factories, controllers, the work queue, leader
 * election, metrics, discovery), so it lives below all of them.
 */
import { closestName } from './closestName.ts';

/** What was given, briefly: `"shop"`, `an array (["shop","ops"])`, `an object ({"app":"web"})`, `a number (5)`. */
export function described(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object') return `a ${typeof value} (${String(value)})`;
  let text: string;
  try {
    text = JSON.stringify(value) ?? '';
  } catch {
    text = '';
  }
  if (value instanceof Set || value instanceof Map) text = JSON.stringify([...value].slice(0, 10)) ?? '';
  const shown = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  const kind = Array.isArray(value) ? 'an array' : value instanceof Set ? 'a Set' : value instanceof Map ? 'a Map' : 'an object';
  return `${kind}${shown ? ` (${shown})` : ''}`;
}

/**
 * An options object's members that the callee does not read, each a `TypeError` naming it and the nearest known name
 * (`namepsace`: did you mean `namespace`?), else the known ones. A misspelt option in a variable (TypeScript checks
 * excess members of object literals only) or from JavaScript was ignored: `{ namepsace: 'a' }` cached the whole
 * cluster. A member whose value is undefined asks for nothing and is let be (a spread of optional settings).
 * `path` prefixes the names (`http.`); `hint` ends the message when a name is known elsewhere (a per-informer option
 * given as a factory's default).
 */
export function checkOptionNames(
  caller: string,
  options: unknown,
  known: readonly string[],
  path = '',
  hint: (name: string) => string | undefined = () => undefined,
): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return;
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined || known.includes(name)) continue;
    // closestName takes a word that differs in case only for the name itself (the CLI's words); here it is the typo.
    const nearest =
      known.find((k) => k.toLowerCase() === name.toLowerCase()) ??
      closestName(
        name,
        known.map((k) => [k]),
      );
    const why =
      hint(name) ??
      (nearest !== undefined ? `did you mean \`${path}${nearest}\`?` : `known: ${known.map((k) => `\`${path}${k}\``).join(', ')}`);
    throw new TypeError(`${caller}: unknown option \`${path}${name}\` (${described(value)}); ${why}`);
  }
}
