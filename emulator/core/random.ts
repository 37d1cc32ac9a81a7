/**
 * mulberry32, a small and well-known seeded generator: uniform in [0, 1), and the same seed draws the
 * same sequence, so probability faults (and the fault suite's schedules) repeat from run to run. Its
 * whole state is one 32-bit number, which a saved state keeps so the draws go on where they stopped.
 */

export class SeededRandom {
  constructor(private current: number) {
    this.current = current >>> 0;
  }

  /** Where the sequence stands: `new SeededRandom(state)` draws on from here. */
  get state(): number {
    return this.current;
  }

  next(): number {
    this.current = (this.current + 0x6d2b79f5) >>> 0;
    let t = this.current;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}

/** The draws of `new SeededRandom(seed)` as a function. */
export function seededRandom(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}
