/**
 * The public types every data source takes. They live apart from ./client.ts, whose declarations name
 * the SDK client, so that a program's type check of this package never reaches the SDK's (or zod's).
 */
import type * as pulumi from "@pulumi/pulumi";
import type { ConnectionOverrides } from "../settings";

/** Options every data source accepts. */
export interface DataSourceOptions extends ConnectionOverrides {
  /**
   * Items per page when walking a list (default: the SDK's). Every page is read whatever the size;
   * a smaller size only means more requests. Catalogue results are cached regardless of it.
   */
  pageSize?: number;
}

/** Arguments of an `...Output` form: each field may be a `pulumi.Input`. */
export type InputArgs<T> = { [K in keyof T]: pulumi.Input<T[K]> };
