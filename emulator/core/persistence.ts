import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";

/**
 * The `--state FILE`: read once at start, written whole after every change. The write goes to a
 * temporary file that is then renamed over the old one, so a crash leaves either the old or the new
 * state, never half of one. Writes are synchronous and happen before the answer is sent, so an
 * acknowledged change survives a restart of the process.
 */
export class StateFile {
  constructor(readonly path: string) {}

  load(): unknown {
    if (!existsSync(this.path)) return undefined;
    return JSON.parse(readFileSync(this.path, "utf8"));
  }

  save(state: unknown): void {
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(state));
    renameSync(temporary, this.path);
  }
}
