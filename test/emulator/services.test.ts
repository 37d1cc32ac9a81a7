import { connect } from "node:net";
import { SSH_IDENTIFICATION } from "pulumi-gpucloud/emulator";
import { createInstance, gpuUuid, instanceInfo, pod, startTestEmulator, type TestEmulator } from "./helpers";

interface ServerMapEntry {
  title: string;
  url: string;
  port_type: string;
  ssh_info?: { host: string; port: number; username: string; password: string };
}

const SERVICES_SECONDS = 90;

/** What an SSH client reads first from host:port, or the error that met it. */
function sshGreeting(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString();
      if (text.includes("\n")) {
        socket.destroy();
        resolve(text.trim());
      }
    });
    socket.on("error", (error: NodeJS.ErrnoException) => resolve(`error ${error.code}`));
    socket.on("close", () => resolve(text === "" ? "closed" : text.trim()));
  });
}

describe("instances' services at addresses the emulator answers", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ durations: { services: SERVICES_SECONDS } });
  });
  afterAll(() => t.close());
  beforeEach(() => t.admin("POST", "/reset"));

  const serverMap = async (uuid: string): Promise<ServerMapEntry[]> =>
    (await instanceInfo(t, uuid)).body.data.server_map;
  const web = async (uuid: string): Promise<ServerMapEntry> =>
    (await serverMap(uuid)).find((e) => e.port_type === "http")!;
  const ssh = async (uuid: string) => (await serverMap(uuid)).find((e) => e.port_type === "ssh")!.ssh_info!;

  it.each([
    ["ComfyUI", ["ComfyUI", "SSH"]],
    ["Stable Diffusion WebUI", ["WebUI", "SSH"]],
    ["JupyterLab PyTorch", ["JupyterLab", "SSH"]],
    ["Ollama Open WebUI", ["Open WebUI", "Ollama API", "SSH"]],
  ])("names the web services of a %s instance for its pod, besides SSH", async (podTitle, titles) => {
    const created = await createInstance(t, { podTitle });
    expect((await serverMap(created.instance_uuid)).map((e) => e.title)).toEqual(titles);
  });

  it("names a market image's web service JupyterLab", async () => {
    const image = (await t.api("GET", "/image/market/list", { key: null })).body.data.image_list[0];
    const created = await t.api("POST", "/instance/create_by_image", {
      body: { image_uuid: image.uuid, gpu_uuid: await gpuUuid(t, "4080"), gpu_nums: 1 },
    });
    expect((await serverMap(created.body.data.instance_uuid)).map((e) => e.title)).toEqual([
      "JupyterLab",
      "SSH",
    ]);
  });

  it("serves a web service only `services` seconds after status 2, and 502 once the instance stops", async () => {
    const { instance_uuid: uuid } = await createInstance(t);
    const service = await web(uuid);
    expect(service.url).toBe(`${t.url}/services/${uuid}/8188/`);
    expect((await instanceInfo(t, uuid)).body.data.server_url).toEqual([service.url]);

    expect((await fetch(service.url)).status).toBe(503);
    await t.advance(60);
    expect((await instanceInfo(t, uuid)).body.data.status).toBe(2);
    const booting = await fetch(`${service.url}queue`);
    expect(booting.status).toBe(503);
    expect(await booting.text()).toContain("starting");
    await t.advance(SERVICES_SECONDS - 1);
    expect((await fetch(service.url)).status).toBe(503);
    await t.advance(1);
    const ready = await fetch(`${service.url}queue?x=1`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toContain("ComfyUI");

    await t.api("POST", "/instance/shutdown", { body: { instance_uuid: uuid } });
    expect((await fetch(service.url)).status).toBe(502);
    await t.advance(10);
    expect((await fetch(service.url)).status).toBe(502);
    await t.api("POST", "/instance/destroy", { body: { instance_uuid: uuid } });
    expect((await fetch(service.url)).status).toBe(502);
  });

  it("answers 404 for a port the instance exposes nothing on", async () => {
    const { instance_uuid: uuid } = await createInstance(t);
    expect((await fetch(`${t.url}/services/${uuid}/9999/`)).status).toBe(404);
    expect((await fetch(`${t.url}/services/${uuid}/not-a-port/`)).status).toBe(404);
  });

  it("goes down during a restart and comes back `services` seconds after status 2 again", async () => {
    const { instance_uuid: uuid } = await createInstance(t);
    const { url } = await web(uuid);
    await t.advance(60 + SERVICES_SECONDS);
    expect((await fetch(url)).status).toBe(200);
    await t.api("POST", "/instance/restart", { body: { instance_uuid: uuid } });
    expect((await fetch(url)).status).toBe(503);
    await t.advance(20 + SERVICES_SECONDS);
    expect((await fetch(url)).status).toBe(200);
  });

  it("opens an SSH listener that sends an identification line when ready, and closes it on stop", async () => {
    const { instance_uuid: uuid } = await createInstance(t);
    const login = await ssh(uuid);
    expect(login).toMatchObject({ host: "127.0.0.1", username: "root", port: expect.any(Number) });
    // Below the ports listen(0) hands out, so no other program's listen(0) takes it while stopped.
    expect(login.port).toBeGreaterThanOrEqual(20_000);
    expect(login.port).toBeLessThan(32_768);
    expect(await sshGreeting(login.host, login.port)).toBe("error ECONNREFUSED");

    await t.advance(60 + SERVICES_SECONDS);
    expect(await ssh(uuid)).toEqual(login);
    expect(await sshGreeting(login.host, login.port)).toBe(SSH_IDENTIFICATION);

    await t.api("POST", "/instance/shutdown", { body: { instance_uuid: uuid } });
    expect(await sshGreeting(login.host, login.port)).toBe("error ECONNREFUSED");
    await t.advance(10);
    await t.api("POST", "/instance/startup", { body: { instance_uuid: uuid } });
    await t.advance(30 + SERVICES_SECONDS);
    expect((await ssh(uuid)).port).toBe(login.port);
    expect(await sshGreeting(login.host, login.port)).toBe(SSH_IDENTIFICATION);

    await t.api("POST", "/instance/destroy", { body: { instance_uuid: uuid } });
    expect(await sshGreeting(login.host, login.port)).toBe("error ECONNREFUSED");
    expect(t.running.emulator.gateway.openListeners()).toBe(0);
  });

  it("gives each instance its own SSH port and closes every listener on reset", async () => {
    const a = await createInstance(t);
    const b = await createInstance(t, { podTitle: "Stable Diffusion WebUI" });
    await t.advance(60 + SERVICES_SECONDS);
    const [portA, portB] = [(await ssh(a.instance_uuid)).port, (await ssh(b.instance_uuid)).port];
    expect(portA).not.toBe(portB);
    expect(t.running.emulator.gateway.openListeners()).toBe(2);
    await t.admin("POST", "/reset");
    expect(t.running.emulator.gateway.openListeners()).toBe(0);
    expect(await sshGreeting("127.0.0.1", portA)).toBe("error ECONNREFUSED");
  });

  it("closes every SSH listener when the emulator closes", async () => {
    const other = await startTestEmulator();
    const { instance_uuid: uuid } = await createInstance(other);
    await other.advance(60);
    const login = (await instanceInfo(other, uuid)).body.data.server_map.find(
      (e: ServerMapEntry) => e.port_type === "ssh",
    ).ssh_info;
    expect(await sshGreeting(login.host, login.port)).toBe(SSH_IDENTIFICATION);
    await other.close();
    expect(other.running.emulator.gateway.openListeners()).toBe(0);
    expect(await sshGreeting(login.host, login.port)).toBe("error ECONNREFUSED");
  });

  it("serves web services at once with the default durations (services 0)", async () => {
    const other = await startTestEmulator();
    try {
      const comfy = await pod(other, "ComfyUI");
      const created = await other.api("POST", "/instance/create_by_pod", {
        body: { pod_uuid: comfy.uuid, gpu_uuid: await gpuUuid(other, "4090D"), gpu_nums: 1 },
      });
      const uuid = created.body.data.instance_uuid;
      await other.advance(60);
      const url = (await instanceInfo(other, uuid)).body.data.server_url[0];
      expect((await fetch(url)).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});
