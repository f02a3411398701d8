/**
 * Repeated warnings folded: under load every replica says `Lease Timeout: get lease pods-shard-7: no answer within
 * 1500 ms` for shard after shard, screens of one message. A line is printed the first time its shape (the line with
 * its numbers as `N`, not digits inside a word: k8s, v1) is seen; its repeats are counted and told as one line per shape at each `flush()`.
 */
export class LineFolder {
  /** Each shape seen since the last flush, and how many times it came again. */
  private readonly seen = new Map<string, number>();
  private readonly write: (line: string) => void;

  constructor(write: (line: string) => void) {
    this.write = write;
  }

  add(line: string): void {
    const shape = line.replace(/\b\d+\b/g, 'N');
    const repeats = this.seen.get(shape);
    this.seen.set(shape, repeats === undefined ? 0 : repeats + 1);
    if (repeats === undefined) this.write(line);
  }

  /** One line per shape repeated since the last flush (`LINE-SHAPE (×12 more)`); then every shape counts afresh. */
  flush(): void {
    for (const [shape, repeats] of this.seen) if (repeats > 0) this.write(`${shape} (×${repeats} more)`);
    this.seen.clear();
  }
}
