/**
 * HTML built from tagged templates that escape every interpolated value. Titles, user names, fault paths
 * and API messages are user input: the only way to put markup into a page is another `html` template, so
 * a title `<script>` renders as text.
 */

/** Markup that is already safe: made by `html` from escaped values. */
export class Html {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

/** A value an `html` template accepts: text (escaped), markup, a list of either, or nothing. */
export type Renderable = Html | string | number | boolean | null | undefined | readonly Renderable[];

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): Html {
  let text = strings[0];
  values.forEach((value, i) => {
    text += render(value) + strings[i + 1];
  });
  return new Html(text);
}

function render(value: Renderable): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join("");
  // false and null render nothing, so `${cond && html`...`}` reads naturally.
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}
