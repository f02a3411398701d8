/**
 * "Did you mean …?": the one known name close to a mistyped one (a CLI option, a command, a resource, an option's key
 * in an options object). kubectl says `the server doesn't have a resource type "podz"` and nothing more; we add the
 * hint when one name is clearly meant.
 */

/** Longer words are not compared (a hint is for typos, and the table is words × names). */
const LONGEST = 64;

/**
 * The Damerau–Levenshtein distance (optimal string alignment: insertions, deletions, substitutions and
 * transpositions of two neighbours, each 1), case-insensitive.
 */
export function editDistance(a: string, b: string): number {
  const [x, y] = [a.toLowerCase(), b.toLowerCase()];
  // d[i][j]: the distance between x's first i characters and y's first j.
  const d: number[][] = Array.from({ length: x.length + 1 }, (_, i) => [i, ...Array<number>(y.length).fill(0)]);
  for (let j = 1; j <= y.length; j++) d[0]![j] = j;
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[x.length]![y.length]!;
}

/** How far a word may be from the name it is taken for: less than half its length, at most 2 (`px` is no typo of `po`). */
function reach(word: string): number {
  return Math.min(2, Math.floor((word.length - 1) / 2));
}

/**
 * The name `word` most likely meant: among `groups` (each the names of one thing, its preferred name first), the
 * names at the least distance, within {@link reach}; a group's nearest name stands for it (its first when several
 * are as near). Undefined unless exactly one name is nearest, or for the word itself (it is no typo of a name).
 */
export function closestName(word: string, groups: readonly (readonly string[])[]): string | undefined {
  if (word.length === 0 || word.length > LONGEST) return undefined;
  let least = reach(word);
  let nearest = new Set<string>();
  for (const names of groups) {
    let best: { name: string; distance: number } | undefined;
    for (const name of names) {
      if (name.length === 0 || name.length > LONGEST) continue;
      const distance = editDistance(word, name);
      if (distance === 0) return undefined;
      if (!best || distance < best.distance) best = { name, distance };
    }
    if (!best || best.distance > least) continue;
    if (best.distance < least) [least, nearest] = [best.distance, new Set()];
    nearest.add(best.name);
  }
  return nearest.size === 1 ? [...nearest][0] : undefined;
}

/** `; did you mean X?` when one name is close to `word`, else nothing. */
export function didYouMean(word: string, groups: readonly (readonly string[])[]): string {
  const name = closestName(word, groups);
  return name === undefined ? '' : `; did you mean ${name}?`;
}
