/**
 * The web console's actions: each form a person posts (rename, power, destroy, save an image, idle policy,
 * utilization, GPU stock, clock, faults, request log, reset), checked and carried out through the console's
 * model.
 */
import { z } from "zod";
import { faultSchema } from "../core/controls/faults";
import { parseBody } from "../core/http/validation";
import { idleCloseBody, updateTitleBody, utilizationBody } from "../instances/routes";
import { stockSettingSchema } from "../stock/setting";
import type { ConsoleModel, InstanceRow } from "./model";

/** A submitted form: every field is text, absent when the form did not send it. */
export type Form = Record<string, string | undefined>;

export interface ConsoleAction {
  /** What the action does, for "Could not ...: <the API's reason>". */
  does: string;
  /** Carries the action out through the model and says what happened. */
  run(model: ConsoleModel, form: Form): string;
}

/** The numeric fields of a fault that the console's form offers: those the fault schema has. */
export const FAULT_NUMBER_FIELDS = ["count", "ms", "probability"].filter((name) => name in faultSchema.shape);

/** The longest single advance, as the admin API allows. */
const MAX_ADVANCE_SECONDS = 10 * 365 * 86400;
const advanceForm = z.object({ seconds: z.number().int().min(1).max(MAX_ADVANCE_SECONDS) });
const instanceForm = z.object({
  user: z.string().min(1, { message: "is required" }),
  instance_uuid: z.string().min(1, { message: "is required" }),
});
const gpuForm = z.object({ gpu_uuid: z.string().min(1, { message: "is required" }) });
const clearFaultForm = z.object({
  index: z.number().int().min(0),
  path: z.string(),
  kind: z.string(),
});

/**
 * Every action of the console, by the name its forms post to. The API's own request schemas check the
 * fields they share with an API call, so a console user meets the API's rules and messages.
 */
export const CONSOLE_ACTIONS: Record<string, ConsoleAction> = {
  rename: {
    does: "rename the instance",
    run(model, form) {
      const { user, instance_uuid } = parseBody(instanceForm, form);
      const { title } = parseBody(updateTitleBody, { instance_uuid, title: form.title ?? "" });
      model.rename(user, instance_uuid, title);
      return `Renamed instance ${instance_uuid} to "${title}".`;
    },
  },
  stop: powerAction("stop", (model, user, uuid) => model.stop(user, uuid)),
  start: powerAction("start", (model, user, uuid) => model.start(user, uuid)),
  restart: powerAction("restart", (model, user, uuid) => model.restart(user, uuid)),
  destroy: {
    does: "destroy the instance",
    run(model, form) {
      const { user, instance_uuid } = parseBody(instanceForm, form);
      const name = nameOf(model.instance(user, instance_uuid));
      model.destroy(user, instance_uuid);
      return `Destroyed ${name}.`;
    },
  },
  "save-image": {
    does: "save the instance as an image",
    run(model, form) {
      const { user, instance_uuid } = parseBody(instanceForm, form);
      model.saveImage(user, instance_uuid);
      return `Saving ${nameOf(model.instance(user, instance_uuid))} as a personal image: the account page lists it.`;
    },
  },
  "idle-policy": {
    does: "set the idle policy",
    run(model, form) {
      const { user, instance_uuid } = parseBody(instanceForm, form);
      const { instance_uuid: _uuid, ...policy } = parseBody(idleCloseBody, {
        instance_uuid,
        idle_period_minutes: numberField(form, "idle_period_minutes"),
        destroy: form.destroy !== undefined,
        idle_gpu_threshold: numberField(form, "idle_gpu_threshold"),
        idle_fb_threshold: numberField(form, "idle_fb_threshold"),
      });
      model.setIdlePolicy(user, instance_uuid, policy);
      const outcome = policy.destroy ? "destroyed" : "stopped";
      return `Idle policy set: ${nameOf(model.instance(user, instance_uuid))} is ${outcome} after ${policy.idle_period_minutes} idle minutes.`;
    },
  },
  "cancel-idle-policy": {
    does: "cancel the idle policy",
    run(model, form) {
      const { user, instance_uuid } = parseBody(instanceForm, form);
      const none = { idle_period_minutes: 0, destroy: false, idle_gpu_threshold: 0, idle_fb_threshold: 0 };
      model.setIdlePolicy(user, instance_uuid, none);
      return `Idle policy cancelled: ${nameOf(model.instance(user, instance_uuid))} has none now.`;
    },
  },
  utilization: {
    does: "set the utilisation",
    run(model, form) {
      const { user, instance_uuid } = parseBody(instanceForm, form);
      const value = parseBody(utilizationBody.omit({ index: true }), {
        gpu: numberField(form, "gpu"),
        fb: numberField(form, "fb"),
      });
      model.setUtilization(user, instance_uuid, value);
      return `Every GPU of ${nameOf(model.instance(user, instance_uuid))} now reports ${value.gpu} % and memory ${value.fb} %.`;
    },
  },
  "gpu-stock": {
    does: "set the GPU stock",
    run(model, form) {
      const gpuUuid = parseBody(gpuForm, form).gpu_uuid;
      const free = form.free?.trim() ?? "";
      const setting = parseBody(stockSettingSchema, {
        free: free === "" ? null : Number(free),
        refuse_probability: numberField(form, "refuse_probability"),
      });
      const stock = model.setStock(gpuUuid, setting);
      const cards = stock.free === null ? "unlimited cards" : `${stock.free} free cards`;
      return `${stock.gpu_name} has ${cards} now, ${stock.in_use} in use.`;
    },
  },
  advance: {
    does: "advance the clock",
    run(model, form) {
      const { seconds } = parseBody(advanceForm, { seconds: numberField(form, "seconds") });
      model.advance(seconds);
      return `The clock moved ${seconds} simulated seconds.`;
    },
  },
  "inject-fault": {
    does: "inject the fault",
    run(model, form) {
      const fault = parseBody(faultSchema, {
        path: form.path,
        kind: form.kind,
        ...Object.fromEntries(FAULT_NUMBER_FIELDS.map((name) => [name, numberField(form, name)])),
      });
      model.injectFault(fault);
      return `Armed ${fault.kind} on ${fault.path}.`;
    },
  },
  "clear-fault": {
    does: "clear the fault",
    run(model, form) {
      const shown = parseBody(clearFaultForm, { ...form, index: numberField(form, "index") });
      model.clearFault(shown.index, shown);
      return `Cleared ${shown.kind} on ${shown.path}.`;
    },
  },
  "clear-faults": {
    does: "clear the faults",
    run(model) {
      model.clearFaults();
      return "No faults are pending now.";
    },
  },
  "clear-requests": {
    does: "clear the request log",
    run(model) {
      model.clearRequests();
      return "The request log is empty.";
    },
  },
  reset: {
    does: "reset the emulator",
    run(model) {
      model.reset();
      return "The emulator is back to its seed: no instances, runs or faults, every balance as it started.";
    },
  },
};

function powerAction(
  operation: "stop" | "start" | "restart",
  act: (model: ConsoleModel, user: string, uuid: string) => void,
): ConsoleAction {
  const verb = `${operation[0].toUpperCase()}${operation.slice(1)}`;
  return {
    does: `${operation} the instance`,
    run(model, form) {
      const { user, instance_uuid } = parseBody(instanceForm, form);
      act(model, user, instance_uuid);
      const instance = model.instance(user, instance_uuid);
      return `${verb} requested: ${nameOf(instance)} is ${instance.status_name} (status ${instance.status}).`;
    },
  };
}

function nameOf(instance: InstanceRow): string {
  return instance.title === ""
    ? `instance ${instance.instance_uuid}`
    : `instance "${instance.title}" (${instance.instance_uuid})`;
}

/** A number typed into a form: absent or blank is absent (the schema's default applies), anything else is parsed. */
function numberField(form: Form, name: string): number | undefined {
  const text = form[name]?.trim();
  return text === undefined || text === "" ? undefined : Number(text);
}
