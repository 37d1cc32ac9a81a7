/**
 * Instance titles: the provider finds the instances it made, and tells them from another stack's, by
 * their titles, and refresh shows drift by them. An instance without one, or two sharing one, defeats both.
 * Messages name the resources, never the titles, which a program may have made secret.
 */
import type { ReportViolation, StackValidationArgs, StackValidationPolicy } from "@pulumi/policy";
import { refusingUnknownConfig } from "./config";
import { instancesOf, quoted, undecided, Unknown } from "./resources";

/** Every Instance declares a title, and no two Instances of the stack declare the same one. */
export const uniqueTitles: StackValidationPolicy = refusingUnknownConfig({
  name: "gpucloud-unique-titles",
  description: "Every GPU instance has a title of its own within the stack.",
  enforcementLevel: "mandatory",
  validateStack: checkTitles,
});

function checkTitles(args: StackValidationArgs, report: ReportViolation): void {
  const byTitle = new Map<string, string[]>();
  let unknown: Unknown | undefined;
  for (const { title, name, urn } of instancesOf(args.resources)) {
    if (title instanceof Unknown) {
      unknown ??= title;
      continue;
    }
    if (title === undefined || title.trim() === "") {
      report(
        `"${name}" declares no title: the provider tells the instances it made from others by their titles. Give it a title.`,
        urn,
      );
      continue;
    }
    byTitle.set(title, [...(byTitle.get(title) ?? []), name]);
  }
  for (const names of byTitle.values()) {
    if (names.length < 2) continue;
    report(
      `${quoted(names)} declare the same title: the provider tells the instances it made apart by their ` +
        "titles, so each needs its own.",
    );
  }
  // A title not known until up may repeat one of the others.
  if (unknown) undecided(unknown);
}
