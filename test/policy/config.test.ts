/**
 * The pack config each policy of the cost guard takes: a key it does not take is refused before anything
 * is checked, naming the key, the policy and the keys it takes, so a typo never leaves a default in force;
 * `baseUrl` is refused with its reason, since only the stack's own endpoint may receive its key.
 */
import {
  costGuardPolicies,
  instanceHourlyPrice,
  stackHourlyBudget,
  uniqueTitles,
} from "../../provider/policy";
import { useGuardCloud } from "./guard-cloud";
import { checkResource, checkStack, instance } from "./stack-view";

const cloud = useGuardCloud();

describe("the cost guard's policy pack config", () => {
  it("refuses a key a policy does not take, naming the key, the policy and the keys it takes", async () => {
    await expect(checkStack(stackHourlyBudget, [instance("a")], { maxHourlyCots: 20 })).rejects.toThrow(
      'The policy pack config gives gpucloud-stack-hourly-budget the key "maxHourlyCots", which it does not ' +
        "take: gpucloud-stack-hourly-budget takes maxHourlyCost and enforcementLevel. Fix the key in the policy pack config.",
    );
    await expect(checkResource(stackHourlyBudget, instance("a"), { maxHourlyCots: 20 })).rejects.toThrow(
      'the key "maxHourlyCots"',
    );
    await expect(checkStack(uniqueTitles, [instance("a")], { strict: true })).rejects.toThrow(
      "gpucloud-unique-titles takes only enforcementLevel",
    );
  });

  it("refuses baseUrl, which would send the stack's key elsewhere, before any call to the cloud", async () => {
    const elsewhere = { baseUrl: "http://127.0.0.1:9" };
    await expect(checkResource(instanceHourlyPrice, instance("a"), elsewhere)).rejects.toThrow(
      'The policy pack config gives gpucloud-instance-hourly-price the key "baseUrl", which it does not take: ' +
        "the cost guard reads the cloud only at the stack's own endpoint (gpucloud:baseUrl or GPUCLOUD_BASE_URL), " +
        "the one address that may receive the stack's API key. Remove baseUrl from the policy pack config.",
    );
    expect(await cloud.calls("/gpu/list")).toBe(0);
  });

  it("takes no baseUrl in any policy's schema", () => {
    const keys = costGuardPolicies.flatMap((p) => Object.keys(p.configSchema?.properties ?? {}));
    expect(keys).not.toContain("baseUrl");
  });
});
