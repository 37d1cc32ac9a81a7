/* global module, require, process */
// The program Pulumi's nodejs language host runs for this plugin folder (PulumiPlugin.yaml): the same
// server as the `pulumi-resource-gpucloud` bin, given the arguments the engine passed (its address).
module.exports = require("pulumi-gpucloud/native").runPlugin(process.argv.slice(2));
