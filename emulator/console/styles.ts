/** The console's style sheet, served as /console/assets/console.css. */

export const CONSOLE_STYLES = `
:root {
  --ink: #1d2330;
  --muted: #5d6675;
  --line: #d9dee6;
  --paper: #ffffff;
  --wash: #f4f6f9;
  --accent: #1f5fbf;
  --on: #17753a;
  --off: #5d6675;
  --busy: #9a5b00;
  --bad: #b42318;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--ink);
  background: var(--wash);
}
body { margin: 0; }
a { color: var(--accent); }
code { font: 12px/1.3 ui-monospace, "DejaVu Sans Mono", monospace; }
code.id { display: block; color: var(--muted); }
.muted { color: var(--muted); }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }

.top { display: flex; align-items: center; gap: 24px; padding: 10px 24px; background: var(--ink); color: #fff; }
.top a { color: #fff; }
.brand { margin: 0; font-weight: 600; font-size: 16px; }
.brand span { font-weight: 400; opacity: 0.7; }
.top nav { flex: 1; }
.top nav ul { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 0; padding: 0; list-style: none; }
.top nav a { text-decoration: none; opacity: 0.85; }
.top nav a[aria-current="page"] { opacity: 1; border-bottom: 2px solid #fff; }

.messages { padding: 0 24px; }
.messages p { margin: 8px 0 0; }
.messages p:empty { display: none; }
#notice { padding: 8px 12px; background: #e7f4ec; border-left: 4px solid var(--on); }
#problem { padding: 8px 12px; background: #fdecea; border-left: 4px solid var(--bad); }
#connection { color: var(--bad); }

main { padding: 8px 24px 32px; }
.page-head { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 8px 16px; margin: 12px 0 4px; }
h1 { font-size: 22px; margin: 0; }
h2 { font-size: 16px; margin: 24px 0 8px; }
h2 b { font-weight: 600; }
h2 .muted, h2 a { font-size: 13px; font-weight: 400; margin-left: 10px; }
h3 { font-size: 14px; margin: 14px 0 6px; }

.clock { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 14px; background: var(--paper);
  border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; }
.clock h2 { margin: 0; font-size: 13px; color: var(--muted); font-weight: 600; }
.clock .now { margin: 0; font-size: 15px; font-weight: 600; }
.clock .now .muted { font-weight: 400; font-size: 12px; }
.clock .row { margin: 0; }
.clock input { width: 6em; }

.row { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; margin: 4px 0; }
form.inline { display: inline; margin: 0 2px 0 0; }
.columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 0 32px; }

table { width: 100%; border-collapse: collapse; background: var(--paper); border: 1px solid var(--line); }
caption { text-align: left; color: var(--muted); padding: 4px 0; }
th, td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid var(--line); }
thead th { background: var(--wash); font-weight: 600; font-size: 12px; color: var(--muted); }
tbody th { font-weight: 600; }
td.money { font-variant-numeric: tabular-nums; white-space: nowrap; }
.nowrap { white-space: nowrap; }
td small, dd small { display: block; color: var(--muted); font-size: 12px; }
td code { font-size: 11px; }
td.actions { white-space: nowrap; }
td.actions button { padding: 1px 8px; font-size: 13px; }
ul.plain { margin: 0; padding: 0; list-style: none; }
.empty { color: var(--muted); font-style: italic; }

.status { display: inline-block; padding: 0 8px; border-radius: 10px; font-weight: 600; color: #fff; background: var(--busy); }
.status.on { background: var(--on); }
.status.off { background: var(--off); }
.status.bad { background: var(--bad); }
.next { display: block; color: var(--busy); font-size: 12px; }

dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; background: var(--paper);
  border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
dl.summary { max-width: 720px; margin-top: 12px; }

.panel { display: grid; grid-template-columns: max-content 1fr; gap: 6px 10px; align-items: center; margin: 0 0 12px;
  background: var(--paper); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
.panel button, .panel .hint, .panel .check { grid-column: 1 / -1; justify-self: start; margin: 0; }
div.panel { display: flex; }

button { font: inherit; padding: 3px 10px; border: 1px solid #b9c1cd; border-radius: 4px; background: #fff; color: var(--ink); cursor: pointer; }
button:hover { background: var(--wash); }
button:focus-visible, a:focus-visible, input:focus-visible, select:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
button.danger { border-color: var(--bad); color: var(--bad); }
.top button.danger { background: transparent; color: #ffd4cf; border-color: #ffd4cf; }
button.quiet { padding: 1px 8px; font-size: 12px; }
input, select { font: inherit; padding: 2px 6px; border: 1px solid #b9c1cd; border-radius: 4px; }
.panel input:not([type="checkbox"]), .panel select { width: 100%; min-width: 0; box-sizing: border-box; }
`;
