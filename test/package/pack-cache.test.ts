/**
 * `packTarball` packs a package once for each state of the files it ships and copies that tarball after:
 * checked on a small package of its own in a temporary folder, so that nothing here touches the files
 * other suites pack at the same time.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { packedFilesFingerprint, packTarball } from "../../dev/installed";

const run = promisify(execFile);

let root: string;
let destination: string;
const cache = () => path.join(root, "node_modules", ".cache", "pulumi-gpucloud-pack");
const shipped = async (tarball: string) => (await run("tar", ["-xzOf", tarball, "package/lib/a.js"])).stdout;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "pack-cache-"));
  destination = fs.mkdtempSync(path.join(os.tmpdir(), "pack-cache-out-"));
  fs.writeFileSync(
    path.join(root, "package.json"),
    JSON.stringify({ name: "tiny", version: "1.0.0", files: ["lib", "!lib/secret.js"] }),
  );
  fs.mkdirSync(path.join(root, "lib"));
  fs.writeFileSync(path.join(root, "lib", "a.js"), "one\n");
});

afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(destination, { recursive: true, force: true });
});

describe("the packed tarball, kept by what it holds", () => {
  it("is packed once and copied after: the same bytes, the kept file untouched", async () => {
    const first = await packTarball(destination, root);
    const [kept] = fs.readdirSync(cache());
    const keptFile = path.join(cache(), kept, "tiny-1.0.0.tgz");
    const packedAt = fs.statSync(keptFile).mtimeMs;
    const bytes = fs.readFileSync(first);
    fs.rmSync(first);
    const second = await packTarball(destination, root);
    expect(path.basename(second)).toBe("tiny-1.0.0.tgz");
    expect(fs.readFileSync(second).equals(bytes)).toBe(true);
    expect(fs.statSync(keptFile).mtimeMs).toBe(packedAt);
    expect(fs.readdirSync(cache())).toEqual([kept]);
    expect(await shipped(second)).toBe("one\n");
  });

  it("is packed again once a shipped file changes, and the old one is dropped", async () => {
    await packTarball(destination, root);
    const [old] = fs.readdirSync(cache());
    // The same size, so only the time of the change tells the states apart.
    fs.writeFileSync(path.join(root, "lib", "a.js"), "two\n");
    fs.utimesSync(path.join(root, "lib", "a.js"), new Date(), new Date(Date.now() + 5000));
    const tarball = await packTarball(destination, root);
    expect(await shipped(tarball)).toBe("two\n");
    const kept = fs.readdirSync(cache());
    expect(kept).toHaveLength(1);
    expect(kept[0]).not.toBe(old);
  });

  it("changes its fingerprint for a new file, package.json or the manifest's files, not for a file outside them", async () => {
    const before = await packedFilesFingerprint(root);
    fs.writeFileSync(path.join(root, "notes.txt"), "not shipped\n");
    expect(await packedFilesFingerprint(root)).toBe(before);
    fs.writeFileSync(path.join(root, "lib", "b.js"), "new\n");
    const withFile = await packedFilesFingerprint(root);
    expect(withFile).not.toBe(before);
    fs.writeFileSync(
      path.join(root, "package.json"),
      JSON.stringify({ name: "tiny", version: "1.0.1", files: ["lib", "!lib/secret.js"] }),
    );
    expect(await packedFilesFingerprint(root)).not.toBe(withFile);
  });
});
