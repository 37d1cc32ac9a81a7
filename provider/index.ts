/** pulumi-gpucloud: resources (and data sources) of the GPU cloud. */
export * from "./generated/resources";
export * from "./datasources";
export { findOrphans, formatReport, type Orphan, type OrphanReport, type StackExport } from "./orphans";
