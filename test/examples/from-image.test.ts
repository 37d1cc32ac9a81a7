import { openExample, plan, type ExampleRun } from "./helpers";

describe("examples/from-image under pulumi-gpucloud/testing", () => {
  let run: ExampleRun;
  beforeAll(async () => {
    run = await openExample("from-image", { "image:cudaVersion": "12.1", "image:pythonVersion": "3.10" });
  });
  afterAll(() => run.close());

  it("starts an instance from the matching market image, saves it, shows no drift and is destroyed", async () => {
    const { stack, api } = run;
    const up = await stack.up();
    expect(plan(up)).toEqual({ notebook: "create", "notebook-image": "create" });
    expect(up.outputs).toMatchObject({
      marketImage: { imageUuid: "img-b2c3d4e5f6071829", components: { cuda: "12.1", python: "3.10" } },
      personalImageStatus: 2,
    });
    const { image_list } = await api.images.list();
    expect(image_list.map((i) => i.uuid)).toEqual([up.outputs.personalImageUuid]);

    expect(plan(await stack.refresh())).toEqual({ notebook: "same", "notebook-image": "same" });

    // The image goes first: it was saved from the instance, so it depends on it.
    const destroyed = await stack.destroy();
    expect(destroyed.steps.map((s) => s.name)).toEqual(["notebook-image", "notebook"]);
    expect((await api.images.list()).total).toBe(0);
    expect((await api.instances.list()).total).toBe(0);
  });
});
