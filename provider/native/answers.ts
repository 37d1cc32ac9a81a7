/**
 * Parts of the engine's answers that several RPCs give: a check failure (a property and why), and a
 * detailed diff (per property, added, deleted or updated, and whether that replaces the resource).
 */
import * as provproto from "@pulumi/pulumi/proto/provider_pb";
import type { PropertyChange } from "../framework/diff";

const Kind = provproto.PropertyDiff.Kind;

const KINDS: Record<PropertyChange["kind"], [plain: number, replacing: number]> = {
  add: [Kind.ADD, Kind.ADD_REPLACE],
  delete: [Kind.DELETE, Kind.DELETE_REPLACE],
  update: [Kind.UPDATE, Kind.UPDATE_REPLACE],
};

/** Fills the response's detailed diff: each changed input with its kind, compared as inputs. */
export function detailedDiff(res: provproto.DiffResponse, changes: Record<string, PropertyChange>): void {
  const map = res.getDetaileddiffMap();
  for (const [name, change] of Object.entries(changes)) {
    const diff = new provproto.PropertyDiff();
    diff.setKind(KINDS[change.kind][change.replace ? 1 : 0] as provproto.PropertyDiff.Kind);
    diff.setInputdiff(true);
    map.set(name, diff);
  }
  res.setHasdetaileddiff(true);
}

export function checkFailure(property: string, reason: string): provproto.CheckFailure {
  const failure = new provproto.CheckFailure();
  failure.setProperty(property);
  failure.setReason(reason);
  return failure;
}
