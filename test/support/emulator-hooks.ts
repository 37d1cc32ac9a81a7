/**
 * Acting at the exact moment a call reaches the in-process emulator: its fault table is consulted for
 * every API call before the call is carried out, so a hook there can arm a fault or change the cloud
 * right then (what `POST /_emulator/faults` does, without a race against the call).
 */
import type { Emulator } from "pulumi-gpucloud/emulator";

/** Runs `act(path)` for every API call whose path matches, before the call meets its faults. Returns the undo. */
export function onCalls(
  emulator: Emulator,
  matches: (path: string) => boolean,
  act: (path: string) => void,
): () => void {
  const table = emulator.faults;
  const take = table.take.bind(table);
  table.take = (path: string) => {
    if (matches(path)) act(path);
    return take(path);
  };
  return () => {
    table.take = take;
  };
}
