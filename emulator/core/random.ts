/**
 * mulberry32, a small and well-known seeded generator: uniform in [0, 1), and the same seed draws the
 * same sequence, so probability faults (and the fault suite's schedules) repeat from run to run.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
