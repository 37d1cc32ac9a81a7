/**
 * Acting at the exact moment a call reaches the in-process emulator, and learning which call made which
 * instance. The emulator logs every API call and then consults its fault table, synchronously, before
 * carrying the call out, so a hook there can arm a fault or change the cloud right then (what
 * `POST /_emulator/faults` does, without a race against the call). Hooks stack; undo them in reverse.
 */
import type { Emulator, RoomContext } from "pulumi-gpucloud/emulator";
import type { LoggedRequest } from "../../emulator/core/controls/requestlog";

export interface ApiCall {
  /** Relative to the API base, without the query. */
  path: string;
  /** The fingerprint of the call's key (see `fingerprint`), null without one. */
  key: string | null;
  /** The call's entry in the request log: the same object for the whole call. */
  logged: LoggedRequest;
}

/** Runs `act` for every API call, before the call meets its faults. Returns the undo. */
export function onCalls(emulator: Emulator, act: (call: ApiCall) => void): () => void {
  const { log, faults } = emulator;
  const start = log.start;
  const take = faults.take;
  let current: LoggedRequest | undefined;
  log.start = (entry) => (current = start.call(log, entry));
  faults.take = (path) => {
    if (current) act({ path, key: current.key, logged: current });
    return take.call(faults, path);
  };
  return () => {
    log.start = start;
    faults.take = take;
  };
}

/**
 * Runs `made(uuid, logged)` for every instance an API create call makes, with that call's log entry
 * (instances put straight into the store are not reported). The route reads the caller and then calls
 * the store in one expression, so the caller's request is the one the store works for.
 */
export function onInstancesMade(
  emulator: Emulator,
  made: (instanceUuid: string, logged: LoggedRequest) => void,
): () => void {
  const room = emulator.rooms.find((r) => r.name === "instances") as unknown as { ctx: RoomContext };
  const { ctx } = room;
  const store = emulator.instances;
  const currentUser = ctx.currentUser;
  const createByPod = store.createByPod;
  const createByImage = store.createByImage;
  let caller: LoggedRequest | undefined;
  ctx.currentUser = (request) => {
    caller = request.logged;
    return currentUser(request);
  };
  const reporting =
    <A extends unknown[]>(create: (...args: A) => { instance_uuid: string }) =>
    (...args: A) => {
      const by = caller;
      caller = undefined;
      const instance = create.apply(store, args);
      if (by?.path.startsWith("/instance/create_by")) made(instance.instance_uuid, by);
      return instance;
    };
  store.createByPod = reporting(createByPod) as typeof createByPod;
  store.createByImage = reporting(createByImage) as typeof createByImage;
  return () => {
    ctx.currentUser = currentUser;
    store.createByPod = createByPod;
    store.createByImage = createByImage;
  };
}

/**
 * Runs `written(uuid, title, logged)` for every title an API update_title call writes, as the cloud
 * carries it out (a late commit, when it lands), with that call's log entry.
 */
export function onTitlesWritten(
  emulator: Emulator,
  written: (instanceUuid: string, title: string, logged: LoggedRequest) => void,
): () => void {
  const room = emulator.rooms.find((r) => r.name === "instances") as unknown as { ctx: RoomContext };
  const { ctx } = room;
  const store = emulator.instances;
  const currentUser = ctx.currentUser;
  const updateTitle = store.updateTitle;
  let caller: LoggedRequest | undefined;
  ctx.currentUser = (request) => {
    caller = request.logged;
    return currentUser(request);
  };
  store.updateTitle = (user: string, instanceUuid: string, title: string) => {
    const by = caller;
    caller = undefined;
    updateTitle.call(store, user, instanceUuid, title);
    if (by?.path === "/instance/update_title") written(instanceUuid, title, by);
  };
  return () => {
    ctx.currentUser = currentUser;
    store.updateTitle = updateTitle;
  };
}
