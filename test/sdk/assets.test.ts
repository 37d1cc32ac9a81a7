import { mkdtemp, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import {
  InputValidationError,
  MAX_ASSET_BYTES,
  NotFoundError,
  type GpuCloudClient,
} from "pulumi-gpucloud/sdk";
import { countCalls, startCloud, type Cloud } from "./harness";

let cloud: Cloud;
let client: GpuCloudClient;
let dir: string;
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

beforeAll(async () => {
  cloud = await startCloud();
  client = cloud.client();
  dir = await mkdtemp(join(tmpdir(), "sdk-assets-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await cloud.close();
});

describe("assets", () => {
  it("uploads a Buffer and reads it back", async () => {
    const asset = await client.assets.upload(PNG, {
      filename: "face.png",
      media_type: "image",
      ttl_hours: 2,
    });
    expect(asset.asset_id).toMatch(/^asset_/);
    expect(asset.asset_uri).toBe(`asset://${asset.asset_id}`);
    expect(asset).toMatchObject({
      media_type: "image",
      size_bytes: PNG.length,
      original_filename: "face.png",
      purpose: "temp_input",
    });
    expect((await client.assets.get(asset.asset_id)).asset_uri).toBe(asset.asset_uri);
  });

  it("uploads from a path, inferring the type from the file", async () => {
    const path = join(dir, "clip.mp4");
    await writeFile(path, Buffer.alloc(2048, 1));
    const asset = await client.assets.upload(path);
    expect(asset).toMatchObject({ original_filename: "clip.mp4", size_bytes: 2048, media_type: "video" });
  });

  it("uploads from a Readable stream", async () => {
    const asset = await client.assets.upload(Readable.from([Buffer.from("hello "), Buffer.from("world")]), {
      filename: "notes.txt",
    });
    expect(asset).toMatchObject({ size_bytes: 11, original_filename: "notes.txt" });
  });

  it("refuses a file over 100 MB before sending it", async () => {
    const path = join(dir, "huge.bin");
    await writeFile(path, "");
    await truncate(path, MAX_ASSET_BYTES + 1);
    await cloud.clearRequests();
    const err = await client.assets.upload(path).catch((e) => e);
    expect(err).toBeInstanceOf(InputValidationError);
    expect(err.issues[0].reason).toMatch(/limit is 104857600 bytes/);
    expect(countCalls(await cloud.requests(), "/assets")).toBe(0);
  });

  it("stops a stream once it passes 100 MB", async () => {
    const chunk = Buffer.alloc(1024 * 1024, 7);
    async function* endless(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 101; i++) yield chunk;
    }
    const err = await client.assets.upload(Readable.from(endless()), { filename: "big.bin" }).catch((e) => e);
    expect(err).toBeInstanceOf(InputValidationError);
    expect(err.issues[0].reason).toMatch(/the limit is 104857600 bytes/);
  });

  it("refuses a path that is not a readable file", async () => {
    await expect(client.assets.upload(join(dir, "missing.png"))).rejects.toBeInstanceOf(InputValidationError);
  });

  it("sends an asset id as one encoded path segment, so it cannot name another endpoint", async () => {
    const before = cloud.events.length;
    const sneaky = client.assets.get("asset_x/../../instance/list?page=1");
    await expect(sneaky).rejects.toBeInstanceOf(NotFoundError);
    const paths = cloud.events.slice(before).map((e) => e.path);
    expect(paths).toEqual(["/assets/asset_x%2F..%2F..%2Finstance%2Flist%3Fpage%3D1"]);
  });

  it("reads an unknown asset as NotFoundError", async () => {
    await expect(client.assets.get("asset_doesnotexist")).rejects.toBeInstanceOf(NotFoundError);
  });
});
