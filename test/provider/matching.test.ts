/** The matching of lost creates to the instances that appeared (provider/resources/instance/lost-create/matching.ts). */
import { maximumMatching } from "../../provider/resources/instance/lost-create";

/** Claimants admit instances created at or after their window's start. */
const admits = (createdAt: number, windowStart: number) => createdAt >= windowStart;

describe("matching lost creates to instances", () => {
  it("leaves no early instance stranded when an early create could take a later one", () => {
    // Greedy (oldest claimant takes the oldest quiet instance) could give claimant 0 the instance at 20
    // while the one at 5 is not quiet yet; then nobody else could ever take the one at 5.
    const matching = maximumMatching([5, 20], [0, 10], admits);
    expect([...matching]).toEqual(
      expect.arrayContaining([
        [0, 5],
        [10, 20],
      ]),
    );
  });

  it("places as many instances as can be placed, and no instance twice", () => {
    const matching = maximumMatching([1, 2, 3], [0, 2], admits);
    expect(matching.size).toBe(2);
    expect(new Set(matching.values()).size).toBe(2);
    for (const [claimant, instance] of matching) expect(admits(instance, claimant)).toBe(true);
  });

  it("places nothing a window does not admit", () => {
    expect(maximumMatching([1], [5], admits).size).toBe(0);
  });
});
