/** The cost guard's title rule: every instance has a title of its own, and messages never show one. */
import { uniqueTitles } from "../../provider/policy";
import { checkStack, instance, NATIVE, UNKNOWN } from "./stack-view";

describe("gpucloud-unique-titles", () => {
  it("passes instances with titles of their own", async () => {
    expect(await checkStack(uniqueTitles, [instance("a"), instance("b", {}, NATIVE)])).toEqual({
      violations: [],
    });
  });

  it("reports instances that share a title by their names, never by the title", async () => {
    const fleet = [
      instance("a", { title: "s3cr3t" }),
      instance("b", { title: "s3cr3t" }),
      instance("c", { title: "s3cr3t" }),
      instance("d"),
    ];
    expect(await checkStack(uniqueTitles, fleet)).toEqual({
      violations: [
        {
          message:
            '"a", "b" and "c" declare the same title: the provider tells the instances it made apart by their ' +
            "titles, so each needs its own.",
        },
      ],
    });
  });

  it("reports an instance without a title, or with a blank one", async () => {
    const untitled = instance("untitled", { title: undefined });
    const blank = instance("blank", { title: "  " });
    const { violations } = await checkStack(uniqueTitles, [untitled, blank]);
    expect(violations.map((v) => [v.urn, v.message.split(":")[0]])).toEqual([
      [untitled.urn, '"untitled" declares no title'],
      [blank.urn, '"blank" declares no title'],
    ]);
  });

  it("at preview, reports the duplicates it knows, and cannot run for a title not known yet", async () => {
    const outcome = await checkStack(uniqueTitles, [
      instance("a", { title: "same" }),
      instance("b", { title: "same" }),
      instance("later", { title: UNKNOWN }),
    ]);
    expect(outcome.violations).toHaveLength(1);
    expect(outcome.cannotRun).toBe("string value at .title can't be known during preview");
  });
});
