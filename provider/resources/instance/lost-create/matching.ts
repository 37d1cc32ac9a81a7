/**
 * A maximum matching between candidates (instances that appeared) and claimants (creates whose
 * outcome is unknown), where each claimant admits only the candidates of its own time window. Taking
 * candidates greedily could give an early claimant a late instance and strand an early instance that
 * only that claimant could have made; a maximum matching never strands one it can place. Augmenting
 * paths (Kuhn's algorithm): the sets are a fleet's lost answers at most, so its cost does not matter.
 */
export function maximumMatching<C, E>(
  candidates: readonly C[],
  claimants: readonly E[],
  admits: (candidate: C, claimant: E) => boolean,
): Map<E, C> {
  const holder = new Map<E, C>();
  const place = (candidate: C, visited: Set<E>): boolean => {
    for (const claimant of claimants) {
      if (visited.has(claimant) || !admits(candidate, claimant)) continue;
      visited.add(claimant);
      const held = holder.get(claimant);
      if (held === undefined || place(held, visited)) {
        holder.set(claimant, candidate);
        return true;
      }
    }
    return false;
  };
  for (const candidate of candidates) place(candidate, new Set());
  return holder;
}
