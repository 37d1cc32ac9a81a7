/**
 * How the cloud's instance record reads: its statuses, its timer and its services
 * (docs/design/live-service-notes.md#instance-life).
 */
import type { Instance as CloudInstance } from "../../../sdk";

export const RUNNING = 2;
export const SHUTTING_DOWN = [3, 21];
export const STOPPED = [4, 22, 23];

/** Stopped, or on its way there: an instance that runs again only when started. */
export function isHalting(status: number): boolean {
  return SHUTTING_DOWN.includes(status) || STOPPED.includes(status);
}
/** Stopped abnormally: the instance cannot run anymore (its idle policy can never fire). */
export const CANNOT_RUN = [23];
/** Statuses on the way to running (or running): the instance counts as powered on. */
export const POWERED_ON = [0, 1, 2, 24, 27];

/** The exposed services of an instance; their SSH passwords are left out (see sshPasswords). */
export function services(cloud: CloudInstance) {
  return (cloud.server_map ?? []).map((entry) => ({
    title: entry.title ?? null,
    url: entry.url ?? null,
    portType: entry.port_type ?? null,
    protocol: entry.protocol ?? null,
    ssh: entry.ssh_info
      ? { host: entry.ssh_info.host, port: entry.ssh_info.port, username: entry.ssh_info.username }
      : null,
  }));
}

/** The SSH password of each ssh service, keyed by the service's title (`ssh-<index>` when it has none). */
export function sshPasswords(cloud: CloudInstance): Record<string, string> {
  const passwords: Record<string, string> = {};
  (cloud.server_map ?? []).forEach((entry, index) => {
    if (entry.ssh_info) passwords[entry.title ?? `ssh-${index}`] = entry.ssh_info.password;
  });
  return passwords;
}

/** The scheduled shutdown in Unix seconds, when one is set. */
export function scheduledShutdown(cloud: CloudInstance): number | undefined {
  const timer = cloud.shutdown_regular;
  return timer?.enable && timer.shutdown_time > 0 ? timer.shutdown_time : undefined;
}

/**
 * The scheduled shutdown as the instance's inputs show it: none while it is powered off. A timer only
 * shuts down a running instance and can only be cancelled on one
 * (docs/design/live-service-notes.md#power-and-schedule-calls), so a timer left on a
 * stopped instance is not drift that `up` could repair; a start-up cancels or replaces it.
 */
export function shutdownAtInput(cloud: CloudInstance): number | undefined {
  return POWERED_ON.includes(cloud.status) ? scheduledShutdown(cloud) : undefined;
}
