/**
 * The door of the lost-create recovery: everything the rest of the provider uses of it, and nothing
 * else. A create makes, marks and cleans up through its CreateRecovery; what stays unknown becomes a
 * pending record in the state, which a read or delete resolves (readPending, deletePending). The process
 * keeps the recovery's state in one RecoveryState (../memory.ts holds it and hands it in).
 * How it works: docs/architecture.md, "Lost creates".
 */

// A create's recovery (../create.ts): make, mark, release a claim, clean up the late arrivals.
export { CreateRecovery, type Made } from "./create-recovery";

// The recovery's state for the whole process, made once (../memory.ts).
export { RecoveryState } from "./state";

// The pending record in the state: told apart by its id and output, resolved at refresh and destroy.
export { isPendingId, PENDING_OUTPUT, PendingCreate } from "./pending-record";
export { readPending, deletePending } from "./pending-resolution";

// A title half way through a claim, which converge never writes over (../converge.ts).
export { isClaimToken } from "./claim";

// How long a lost call may still be carried out, which a lost power change waits too (../power.ts).
export { lateCommitMs } from "./timing";

// The timing model and the matching the reconciler decides by, whole, for their unit tests.
export * as timingModel from "./timing";
export { maximumMatching } from "./matching";
