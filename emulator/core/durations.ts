/**
 * Simulated durations (`--durations`): how long each transition takes, in simulated
 * seconds. The stores read them from here, so a test or a user can model slower or faster machines.
 */

export const DURATION_NAMES = ["boot", "shutdown", "startup", "restart", "save_image", "services"] as const;
export type DurationName = (typeof DURATION_NAMES)[number];
export type Durations = Record<DurationName, number>;

export const DEFAULT_DURATIONS: Readonly<Durations> = {
  boot: 60,
  shutdown: 10,
  startup: 30,
  restart: 20,
  save_image: 120,
  // The emulator's choice: a web UI answers as soon as its instance runs unless a test asks for a gap.
  services: 0,
};
