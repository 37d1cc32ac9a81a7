/**
 * Warnings of resource operations: something the user should know that does not fail the operation.
 *
 * A dynamic provider has no connection to the Pulumi engine (@pulumi/pulumi's dynamic-provider server
 * never dials the engine address it is given, DESIGN §7, so `pulumi.log.warn` there only prints to the
 * console). The warning is therefore written to the provider process's stderr as `warning: ...`; the
 * Pulumi CLI records a plugin's stderr in its log (shown with `pulumi up --logtostderr -v=9`, and at
 * the resource by CLI versions that show plugin output). A host that holds an engine connection (the
 * native plugin) replaces this with its engine log.
 */
export function warn(message: string): void {
  process.stderr.write(`warning: ${message}\n`);
}
