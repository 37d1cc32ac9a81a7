/**
 * The door of the lost-create recovery: everything the Instance's create, read and delete use of it,
 * and nothing else. A create marks what it made (markAnswered), opens a window on each call it sends
 * (openWindow) and watches calls judged to have made nothing (LateWatch); what stays unknown becomes a
 * pending record (pendingCreateError) that a read or delete resolves (readPending, deletePending). The
 * process memory that holds the recovery's state (../memory.ts) builds it from the parts exported last.
 * How it works: docs/architecture.md, "Lost creates".
 */

// A create: its owner's mark, its windows, its claims, its late watch and what it tells the user.
export { markAnswered, type Marking } from "./owner-mark";
export { openWindow } from "./window";
export { isClaimToken, newClaimantId } from "./claim";
export { releaseClaim, readPending, deletePending } from "./pending-resolution";
export { LateWatch, type LateArrivals } from "./late-watch";
export { sendingAgain, statusReporter, seconds } from "./progress";
export type { Claimant } from "./reconciler";

// What stays unknown: the pending record in the state.
export {
  isPendingId,
  PENDING_OUTPUT,
  PendingCreate,
  pendingCreateError,
  unresolvedError,
} from "./pending-record";

// The timing model.
export {
  adoptionMs,
  isLoopback,
  lateCommitMs,
  modelRequestMs,
  recoveryTiming,
  REMOTE_FLOOR_MS,
  type RecoveryTiming,
} from "./timing";

// The parts of the process memory that hold the recovery's state.
export { CloudPace } from "./pace";
export { PendingRecords } from "./pending-records";
export { Reconcilers, type Reconciler } from "./reconciler";
export { TakenInstances } from "./taken";
export type { RecoveryState } from "./state";

// The matching the reconciler decides by, for its own unit test.
export { maximumMatching } from "./matching";
