/**
 * The environment a program's data sources read while `pulumi-gpucloud/testing` runs it: the newest
 * running program's, and this process's own only when no program is running (a run that stopped early
 * keeps its environment until its program settles, so a late data source never reaches the shell's cloud).
 */
import { enterProgramEnvironment, programEnvironment } from "../../provider/program-environment";

describe("the program environment", () => {
  it("is the newest running program's, whichever leaves first, and this process's once none runs", () => {
    const first = enterProgramEnvironment({ GPUCLOUD_BASE_URL: "http://first" });
    const second = enterProgramEnvironment({ GPUCLOUD_BASE_URL: "http://second" });
    expect(programEnvironment().GPUCLOUD_BASE_URL).toBe("http://second");
    second.leave();
    expect(programEnvironment().GPUCLOUD_BASE_URL).toBe("http://first");
    const third = enterProgramEnvironment({ GPUCLOUD_BASE_URL: "http://third" });
    first.leave();
    expect(programEnvironment().GPUCLOUD_BASE_URL).toBe("http://third");
    third.leave();
    third.leave();
    expect(programEnvironment()).toBe(process.env);
  });

  it("keeps a copy: changing the caller's object later changes nothing", () => {
    const env: NodeJS.ProcessEnv = { GPUCLOUD_API_KEY: "a" };
    const entered = enterProgramEnvironment(env);
    env.GPUCLOUD_API_KEY = "b";
    expect(programEnvironment().GPUCLOUD_API_KEY).toBe("a");
    entered.leave();
  });
});
