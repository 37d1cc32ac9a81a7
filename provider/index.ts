/** pulumi-gpucloud: resources (and data sources) of the GPU cloud. */
export { Instance, InstanceInputsSchema, type InstanceArgs, type ServiceOutput } from "./instance";
export { IdleClosePolicy, IdleClosePolicyInputsSchema, type IdleClosePolicyArgs } from "./idleClosePolicy";
export { PersonalImage, PersonalImageInputsSchema, type PersonalImageArgs } from "./personalImage";
export * from "./datasources";
export { findOrphans, formatReport, type Orphan, type OrphanReport, type StackExport } from "./orphans";
