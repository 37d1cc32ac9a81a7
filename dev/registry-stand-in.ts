/**
 * A stand-in for the npm registry, to follow install instructions written for after the package is
 * published before it is: it answers for this package from a tarball `npm pack` made, as the registry
 * will, and redirects every other request (other packages' metadata and tarballs) to the registry npm is
 * configured with. npm talks to it as to any registry (`npm_config_registry`).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface RegistryStandIn {
  /** The registry URL to give npm. */
  url: string;
  /** The package it serves from the tarball. */
  name: string;
  version: string;
  close(): Promise<void>;
}

/** The registry npm uses here (`npm config get registry`), where the stand-in sends everything else. */
export async function configuredRegistry(): Promise<string> {
  const { stdout } = await run("npm", ["config", "get", "registry"]);
  return stdout.trim();
}

export async function startRegistryStandIn(tarball: string, upstream: string): Promise<RegistryStandIn> {
  const bytes = await fs.promises.readFile(tarball);
  // The manifest as published: the one inside the tarball.
  const { stdout } = await run("tar", ["-xzOf", tarball, "package/package.json"]);
  const manifest = JSON.parse(stdout) as { name: string; version: string };
  const { name, version } = manifest;
  const tarballPath = `/${name}/-/${name}-${version}.tgz`;
  let url = "";
  const packument = () => ({
    name,
    "dist-tags": { latest: version },
    versions: {
      [version]: {
        ...manifest,
        _id: `${name}@${version}`,
        dist: {
          tarball: new URL(tarballPath.slice(1), url).href,
          integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
          shasum: createHash("sha1").update(bytes).digest("hex"),
        },
      },
    },
  });
  const answer = (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? "/").split("?")[0];
    if (path === `/${name}`) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(packument()));
    } else if (path === tarballPath) {
      response.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes.length });
      response.end(bytes);
    } else {
      response.writeHead(302, { location: new URL((request.url ?? "/").slice(1), upstream).href });
      response.end();
    }
  };
  const server = createServer(answer);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    name,
    version,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
