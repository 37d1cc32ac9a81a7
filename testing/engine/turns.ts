/** Pulumi's runtime mocks are global to the process: operations (and program loads) of every Stack take turns. */
let turn: Promise<unknown> = Promise.resolve();

/** Runs `work` once every operation that asked before it has settled. */
export function inTurn<T>(work: () => Promise<T>): Promise<T> {
  const mine = turn.then(work, work);
  turn = mine.catch(() => undefined);
  return mine;
}
