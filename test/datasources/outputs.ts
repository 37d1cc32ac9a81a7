import * as pulumi from "@pulumi/pulumi";

/** The value of an Output, for assertions. Outside a deployment every Output is known, so apply runs. */
export function resolveOutput<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    output.apply((value) => {
      resolve(value);
      return value;
    });
    // An Output whose promise rejects never calls apply: surface the rejection instead of hanging.
    (output as unknown as { promise(): Promise<T> }).promise().catch(reject);
  });
}
