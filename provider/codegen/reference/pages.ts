/**
 * The reference pages: one per resource (and component resource) in docs/resources/, one per data source in docs/data-sources/,
 * named after it in kebab case (docs/resources/idle-close-policy.md, docs/data-sources/get-gpu.md). Written from the same sources as the
 * package schema, and from that schema, by `npm run build`; those two folders hold nothing else.
 */
import type { AnyComponentDefinition } from "../../framework/define-component";
import type { ComponentSchemas } from "../json-schema";
import type { PackageSchema, SchemaSources } from "../package-schema";
import { componentPage } from "./component-page";
import { dataSourcePage } from "./data-source-page";
import { kebab } from "./markdown";
import { resourcePage, type ResourceSources } from "./resource-page";

export const RESOURCE_PAGES = "docs/resources";
export const DATA_SOURCE_PAGES = "docs/data-sources";

export interface ReferenceSources {
  schema: PackageSchema;
  resources: readonly ResourceSources[];
  components: readonly { definition: AnyComponentDefinition; schemas: ComponentSchemas }[];
  dataSources: SchemaSources["dataSources"];
}

/** Every page, by path relative to the package root. */
export function referencePages({
  schema,
  resources,
  components,
  dataSources,
}: ReferenceSources): [string, string][] {
  return [
    ...resources.map((r): [string, string] => [
      `${RESOURCE_PAGES}/${kebab(r.definition.name)}.md`,
      resourcePage(schema, r),
    ]),
    ...components.map((c): [string, string] => [
      `${RESOURCE_PAGES}/${kebab(c.definition.name)}.md`,
      componentPage(schema, c.definition, c.schemas),
    ]),
    ...dataSources.map(({ definition }): [string, string] => [
      `${DATA_SOURCE_PAGES}/${kebab(definition.name)}.md`,
      dataSourcePage(schema, definition),
    ]),
  ];
}
