/**
 * The summary `node --test` prints at the end of a run, read in either of its default formats: TAP
 * (`# pass 1`), which Node.js 20 and 22 print when stdout is not a terminal, and the spec reporter's
 * (`ℹ pass 1`), which Node.js 23 and later print everywhere.
 */

export type NodeTestCount = "tests" | "pass" | "fail" | "cancelled" | "skipped" | "todo";

/** Each count of the summary that `output` holds; a count it does not hold is absent. */
export function nodeTestSummary(output: string): Partial<Record<NodeTestCount, number>> {
  const summary: Partial<Record<NodeTestCount, number>> = {};
  for (const [, count, value] of output.matchAll(
    /^(?:# |\u2139 )(tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm,
  )) {
    summary[count as NodeTestCount] = Number(value);
  }
  return summary;
}
