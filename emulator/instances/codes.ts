/**
 * The instance API's values, as records, state documents and the console all read them: one place, so
 * the store that applies them and the schema that checks a saved state can never disagree.
 */

// docs/design/cloud-api.md#instance-statuses; names from docs/design/live-service-notes.md#instance-life.
/** Instance status codes. */
export const STATUS = {
  CREATED: 0,
  STARTING: 1,
  RUNNING: 2,
  SHUTTING_DOWN_LEGACY: 3,
  STOPPED_LEGACY: 4,
  SHUTTING_DOWN: 21,
  STOPPED: 22,
  STOPPED_ABNORMAL: 23,
  RESTARTING_FROM_STOP: 24,
  RESTARTING: 27,
} as const;

/**
 * Statuses in which an instance's GPU cards are free for others: stopped, normally or not. From create
 * or start until then it holds them, and a destroyed instance holds none (docs/design/contracts.md#gpu-stock).
 */
export const CARDS_RELEASED_STATUSES: readonly number[] = [
  STATUS.STOPPED_LEGACY,
  STATUS.STOPPED,
  STATUS.STOPPED_ABNORMAL,
];

// charging_type values are not shown (docs/design/cloud-api.md#instance-record).
/** charging_type values, the emulator's choice: 1 hourly, 2 subscription. */
export const CHARGING_TYPE = { PAY_AS_YOU_GO: 1, SUBSCRIPTION: 2 } as const;

export const GPU_NUMS = [1, 2, 4, 8] as const;
export const TITLE_MAX = 50;

// docs/design/cloud-api.md#idle-close
/** Idle-close. */
export const IDLE_PERIODS = [0, 10, 30, 60, 120] as const;
