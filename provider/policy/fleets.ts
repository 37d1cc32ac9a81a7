/**
 * Fleets as the cost guard sees them (docs/design/contracts.md#fleet). A Fleet is a component: the engine
 * shows a policy pack its inputs (its size and what its members are made of) before any member exists,
 * since its members are its children and are registered only once it is; then each member, an Instance
 * `<fleet>-<i>` whose parent is the Fleet, as any instance. So a policy judges a Fleet's members from its
 * inputs first, and a Fleet over a limit is stopped before any of them is made; at the end of a preview and
 * after an update the stack's instances are its members, each with its Fleet, and the Fleet itself (whose
 * outputs hold no spec) is never counted.
 */
import Decimal from "decimal.js";
import { TITLE_MAX } from "../../sdk";
import { memberName } from "../fleet/member-names";
import { isDefaultName } from "../framework/autoname";
import { costFromInputs, type Cost, type Mark } from "./billing";
import { described, perHour, type InstancePrice } from "./prices";
import { instanceFacts, ofType, read, type InstanceFacts, type Maybe } from "./resources";
import { runPart } from "./run";

/** A Fleet as a resource policy reads it from its inputs. */
export interface FleetFacts {
  name: string;
  urn: string;
  /**
   * Not a number when the engine was not shown the Fleet's inputs (a program run with
   * PULUMI_NODEJS_SKIP_COMPONENT_INPUTS): its members are then judged one by one as they come.
   */
  size: Maybe<number | undefined>;
  /** What every member is made of, as an Instance's facts named by the fleet (no title: each member has its own). */
  spec: InstanceFacts;
}

export function fleetFacts(fleet: { name: string; urn: string; props: Record<string, unknown> }): FleetFacts {
  const { name, urn, props } = fleet;
  return {
    name,
    urn,
    size: ofType(read(props, "size"), "number"),
    spec: instanceFacts({ name, urn, props }),
  };
}

/**
 * What each member adds, member i at index i: a new instance, or, when the cloud already holds it, as the
 * Instance's own check will count it. A member is found by the title the provider gives it (its autoname,
 * `<fleet>-<i>-` and seven hex digits), the same mark by which the provider finds the instances it made.
 */
export function memberCosts(fleet: FleetFacts, size: number): Promise<Cost[]> {
  return Promise.all(
    Array.from({ length: size }, (_, index) => costFromInputs(member(fleet, index), autonamed(fleet, index))),
  );
}

/** Member `index` of the fleet, before it is registered: the fleet's spec, and its place in the fleet. */
function member(fleet: FleetFacts, index: number): InstanceFacts {
  return {
    ...fleet.spec,
    name: memberName(fleet.name, index),
    fleet: { name: fleet.name, urn: fleet.urn, index },
  };
}

function autonamed(fleet: FleetFacts, index: number): Mark {
  const name = memberName(fleet.name, index);
  return (title) => isDefaultName(title, name, TITLE_MAX);
}

const REPORTED = Symbol("fleets reported for what their members are made of");

/** The Fleets `policy` reported in this run, by URN. */
function reported(policy: string): Set<string> {
  const byPolicy = runPart(REPORTED, () => new Map<string, Set<string>>());
  if (!byPolicy.has(policy)) byPolicy.set(policy, new Set());
  return byPolicy.get(policy)!;
}

/**
 * Records that `policy` reported the Fleet `fleetUrn` for what its members are made of: its members, which
 * are all made of it, are not reported again for it (the engine shows a Fleet before its members).
 */
export function reportedForMembers(policy: string, fleetUrn: string): void {
  reported(policy).add(fleetUrn);
}

/** Whether `policy` already reported the Fleet `instance` is a member of. */
export function reportedWithFleet(policy: string, instance: InstanceFacts): boolean {
  return instance.fleet !== undefined && reported(policy).has(instance.fleet.urn);
}

/** `2 members at 24.04 CNY/h (basis), 3 at 2.08 CNY/h (basis)`: a fleet's members, alike ones together, dearest first. */
export function membersAt(prices: readonly InstancePrice[]): string {
  const alike = new Map<string, { price: InstancePrice; n: number }>();
  for (const price of prices) {
    const key = described(price);
    alike.set(key, { price, n: (alike.get(key)?.n ?? 0) + 1 });
  }
  return [...alike]
    .sort(([, a], [, b]) => b.price.amount.comparedTo(a.price.amount))
    .map(([text, { n }], i) => `${n}${i > 0 ? "" : n === 1 ? " member" : " members"} at ${text}`)
    .join(", ");
}

/** One line of a list of prices: an instance, or a fleet with its members together. */
export interface PriceLine {
  amount: Decimal;
  text: string;
}

/** `prices` as message lines: each instance alone, each fleet's members on one line with their sum. */
export function priceLines(prices: readonly InstancePrice[]): PriceLine[] {
  const lines: PriceLine[] = [];
  const fleets = new Map<string, InstancePrice[]>();
  for (const price of prices) {
    if (!price.fleet) lines.push({ amount: price.amount, text: `${price.name}: ${described(price)}` });
    else fleets.set(price.fleet.urn, [...(fleets.get(price.fleet.urn) ?? []), price]);
  }
  for (const members of fleets.values()) {
    const amount = sum(members);
    lines.push({
      amount,
      text: `fleet "${members[0].fleet!.name}": ${membersAt(members)} = ${perHour(amount)}`,
    });
  }
  return lines;
}

export function sum(prices: readonly InstancePrice[]): Decimal {
  return prices.reduce((total, p) => total.plus(p.amount), new Decimal(0));
}

/** `fleet "big": 100 members × 8 GPUs`, for each fleet among `instances` with a known GPU count. */
export function fleetGpus(instances: readonly InstanceFacts[]): string[] {
  const fleets = new Map<string, { name: string; byCount: Map<number, number> }>();
  for (const { fleet, gpuNums } of instances) {
    if (!fleet || typeof gpuNums !== "number") continue;
    const entry = fleets.get(fleet.urn) ?? { name: fleet.name, byCount: new Map<number, number>() };
    entry.byCount.set(gpuNums, (entry.byCount.get(gpuNums) ?? 0) + 1);
    fleets.set(fleet.urn, entry);
  }
  return [...fleets.values()].map(
    ({ name, byCount }) =>
      `fleet "${name}": ${[...byCount].map(([gpus, n]) => `${n} ${n === 1 ? "member" : "members"} × ${gpus} GPUs`).join(", ")}`,
  );
}
