/**
 * What a fleet's members are called (docs/design/contracts.md#fleet): member i of fleet `trainers` is the
 * Instance `trainers-<i>`. Plain functions with no Pulumi runtime behind them: the cost guard's policy pack
 * tells a fleet's members by them too.
 */

export function memberName(fleet: string, index: number): string {
  return `${fleet}-${index}`;
}

/** The place of `name` in fleet `fleet` (i for `<fleet>-<i>`), or undefined when it is no member's name. */
export function memberIndex(fleet: string, name: string): number | undefined {
  const prefix = `${fleet}-`;
  if (!name.startsWith(prefix)) return undefined;
  const index = name.slice(prefix.length);
  return /^(0|[1-9]\d*)$/.test(index) ? Number(index) : undefined;
}
