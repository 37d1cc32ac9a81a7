/**
 * Instances this provider process knows to be owned: a create answer returned them, a reconciliation
 * claimed them, a state holds them (diff, read or delete met their id), or another claimer won them.
 * None of them is ever a candidate for a create whose answer was lost. Process-wide: instance uuids
 * are unique across the cloud, and what one client learnt holds for every other.
 */
export class TakenInstances {
  private readonly uuids = new Set<string>();

  mark(instanceUuid: string): void {
    this.uuids.add(instanceUuid);
  }

  has(instanceUuid: string): boolean {
    return this.uuids.has(instanceUuid);
  }
}
