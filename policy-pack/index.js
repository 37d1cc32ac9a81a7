/* global require */
// The program Pulumi's nodejs language host runs for this policy pack (PulumiPolicy.yaml). The pack's
// version is this folder's package.json version, which @pulumi/policy reads.
const { PolicyPack } = require("@pulumi/policy");
const { COST_GUARD, costGuardPack } = require("pulumi-gpucloud/policy");

new PolicyPack(COST_GUARD, costGuardPack);
