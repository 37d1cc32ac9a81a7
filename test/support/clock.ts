/** Moving a frozen emulator clock while provider work waits on it, so waits end without sleeping. */
import type { TestEmulator } from "../emulator/helpers";

/**
 * Runs `work` while a parallel task moves the frozen clock `secondsPerStep` at a time (with a short real
 * pause between steps, so polls see each step), and stops moving it once `work` settles.
 */
export async function advancing<T>(emu: TestEmulator, work: Promise<T>, secondsPerStep = 10): Promise<T> {
  let done = false;
  const settled = work.finally(() => (done = true));
  const ticker = (async () => {
    while (!done) {
      emu.running.advance(secondsPerStep);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  try {
    return await settled;
  } finally {
    await ticker;
  }
}
