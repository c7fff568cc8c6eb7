// usage.js: the Usage page — the tokens each role's CLI recorded, per role
// and per day, as GET /v1/usage (`shogun usage`) counts them: a table per
// role with the estimated cost, and a chart of each role's tokens per day
// drawn as SVG, and the roles' accounts as GET /v1/accounts (`shogun
// accounts`) lists them. Days are UTC, as in the API. The numbers are
// refreshed every 30 s, as often as the supervisor reads the CLIs' records.
import { h, get } from './api.js';
import { useStyles } from './pages.js';

const SVG = 'http://www.w3.org/2000/svg';
const COLOURS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
const RANGES = [['7', 'last 7 days'], ['30', 'last 30 days'], ['90', 'last 90 days'], ['0', 'every day']];

/** short(n) writes a count of tokens short: 950, 12.5k, 1.02M. */
export function short(n) {
  const f = (x, unit) => `${Number(x.toPrecision(3))}${unit}`;
  if (n >= 1e9) return f(n / 1e9, 'G');
  if (n >= 1e6) return f(n / 1e6, 'M');
  if (n >= 1e3) return f(n / 1e3, 'k');
  return String(n);
}

/** total(t) is every token of a tokens object, as Tokens.Total in Go. */
export const total = t => t.input + t.output + t.cache_read + t.cache_write;

const dollars = x => '$' + x.toFixed(x >= 1 ? 2 : 4);

export function mount(el) {
  useStyles();
  const range = h('select', { id: 'usage-range' }, RANGES.map(([v, label]) => h('option', { value: v }, label)));
  const note = h('span', { class: 'muted', id: 'usage-note' });
  const err = h('p', { class: 'form-error', id: 'usage-error' });
  const table = h('div', { id: 'usage-roles' });
  const budgets = h('div', { class: 'panel', id: 'usage-budgets', hidden: true });
  const accounts = h('div', { class: 'panel', id: 'usage-accounts', hidden: true });
  const chart = h('div', { id: 'usage-chart', class: 'chart' });
  el.append(
    h('div', { class: 'bar' }, h('h1', {}, 'Usage'), range,
      h('button', { id: 'usage-refresh', onclick: () => load() }, 'Refresh'), note),
    h('p', { class: 'muted' }, 'Tokens are counted from each CLI\'s own records; the cost is an estimate from a dated price table (docs/usage.md). Days are UTC.'),
    err, budgets, accounts,
    h('div', { class: 'panel' }, h('h2', {}, 'Tokens per role per day'), chart),
    h('div', { class: 'panel' }, h('h2', {}, 'Per role'), table));
  range.addEventListener('change', () => load());

  let seq = 0;
  async function load() {
    const mine = ++seq;
    const days = Number(range.value);
    let since = '';
    if (days > 0) {
      const d = new Date(Date.now() - (days - 1) * 86400e3);
      since = d.toISOString().slice(0, 10);
    }
    const q = since ? `&since=${since}` : '';
    try {
      const byRole = await get('/v1/usage?by=role' + q);
      const perDay = await Promise.all(byRole.rows.map(r =>
        get(`/v1/usage?by=day&role=${encodeURIComponent(r.key)}${q}`).then(d => [r.key, d.rows])));
      if (mine !== seq) return;
      err.textContent = '';
      note.textContent = `prices as of ${byRole.prices_as_of}`;
      table.replaceChildren(rolesTable(byRole));
      budgets.hidden = !(byRole.budgets || []).length;
      budgets.replaceChildren(h('h2', {}, 'Daily budgets (today, local time)'), budgetList(byRole.budgets || []));
      chart.replaceChildren(drawChart(perDay, since));
      const list = await get('/v1/accounts');
      if (mine !== seq) return;
      accounts.hidden = !list.length;
      accounts.replaceChildren(h('h2', {}, 'Accounts'), accountList(list));
    } catch (e) {
      if (mine === seq) err.textContent = 'Cannot read the usage: ' + e.message;
    }
  }
  load();
  const timer = setInterval(load, 30000);
  return () => clearInterval(timer);
}

// budgetList shows each daily budget (usage.budgets) against today's
// spending; a reached one holds its role's new tasks.
function budgetList(list) {
  return h('table', { class: 'list budgets' },
    h('thead', {}, h('tr', {}, ['budget', 'spent', '', ''].map(x => h('th', {}, x)))),
    h('tbody', {}, list.map(b => h('tr', { dataset: { role: b.role, reached: String(b.reached) } },
      h('td', {}, b.role || 'team (all roles)'),
      h('td', { class: 'spent' }, b.text),
      h('td', {}, h('meter', { min: 0, max: 100, low: 80, high: 99, optimum: 0, value: Math.min(b.percent, 100) }), ` ${b.percent} %`),
      h('td', { class: b.reached ? 'held' : 'muted' }, b.reached ? 'reached: no new task is typed until it is raised or the day turns' : '')))));
}

// accountList shows the roles' accounts (docs/accounts.md): which roles
// may run on each, its state, when its last usage limit lifts, and its
// tokens of the day (UTC) when it has a config folder of its own.
function accountList(list) {
  const until = a => a.limited_until ? new Date(a.limited_until).toLocaleString() : '';
  return h('table', { class: 'list accounts' },
    h('thead', {}, h('tr', {}, ['account', 'roles', 'state', 'limited until', 'tokens today'].map(x => h('th', {}, x)))),
    h('tbody', {}, list.map(a => h('tr', { dataset: { account: a.account, state: a.state } },
      h('td', {}, a.account),
      h('td', { class: 'roles' }, a.roles.join(', ')),
      h('td', { class: 'state ' + (a.state === 'limited' ? 'held' : '') },
        a.state === 'in use' ? 'in use by ' + a.in_use_by.join(', ') : a.state),
      h('td', { class: 'until' }, a.state === 'limited' ? until(a) : ''),
      h('td', { class: 'num tokens', title: a.tokens_today ? String(total(a.tokens_today)) : 'shares its config folder with another account' },
        a.tokens_today ? short(total(a.tokens_today)) : '—')))));
}

function rolesTable(rep) {
  if (!rep.rows.length) return h('p', { class: 'placeholder' }, 'No tokens recorded yet.');
  const row = (r, cls) => h('tr', { class: cls, dataset: { key: r.key, tokens: String(total(r.tokens)) } },
    h('td', {}, r.key),
    h('td', { class: 'num total' }, short(total(r.tokens))),
    ...['input', 'output', 'cache_read', 'cache_write', 'reasoning'].map(k => h('td', { class: 'num', title: String(r.tokens[k]) }, short(r.tokens[k]))),
    h('td', { class: 'num' }, String(r.calls)),
    h('td', { class: 'num cost' }, dollars(r.cost_usd) + ((r.unpriced || []).length ? ' +?' : '')),
    h('td', { class: 'muted' }, (r.unpriced || []).length ? 'no price for ' + r.unpriced.join(', ') : ''));
  return h('table', { class: 'list usage' },
    h('thead', {}, h('tr', {}, ['role', 'tokens', 'input', 'output', 'cache read', 'cache write', 'reasoning', 'calls', 'cost (est.)', ''].map(x => h('th', {}, x)))),
    h('tbody', {}, rep.rows.map(r => row(r, ''))),
    h('tfoot', {}, row(rep.total, 'sum')));
}

// drawChart draws each role's tokens per day as bars stacked by role, one
// column per day from since (or the first day recorded) to today.
function drawChart(perDay, since) {
  const days = new Set();
  for (const [, rows] of perDay) for (const r of rows) days.add(r.key);
  if (!days.size) return h('p', { class: 'placeholder' }, 'No tokens recorded in these days.');
  const first = since || [...days].sort()[0];
  const list = [];
  for (let d = new Date(first + 'T00:00:00Z'); ; d = new Date(d.getTime() + 86400e3)) {
    const key = d.toISOString().slice(0, 10);
    list.push(key);
    if (key >= new Date().toISOString().slice(0, 10) || list.length > 400) break;
  }
  const sums = new Map(list.map(d => [d, 0]));
  for (const [, rows] of perDay) for (const r of rows) sums.set(r.key, (sums.get(r.key) || 0) + total(r.tokens));
  const top = Math.max(1, ...sums.values());
  const W = 720, H = 240, left = 56, bottom = 28, top0 = 10;
  const bw = (W - left - 8) / list.length;
  const y = v => H - bottom - (v / top) * (H - bottom - top0);
  const el = (tag, attrs, text) => {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'tokens per role per day', id: 'usage-svg' });
  for (const f of [0, 0.5, 1]) {
    svg.append(el('line', { x1: left, x2: W - 4, y1: y(top * f), y2: y(top * f), class: 'grid' }));
    svg.append(el('text', { x: left - 6, y: y(top * f) + 4, 'text-anchor': 'end', class: 'axis' }, short(Math.round(top * f))));
  }
  const base = new Map(list.map(d => [d, 0]));
  perDay.forEach(([role, rows], i) => {
    const colour = COLOURS[i % COLOURS.length];
    for (const r of rows) {
      const x = list.indexOf(r.key);
      if (x < 0) continue;
      const v = total(r.tokens), b = base.get(r.key);
      const rect = el('rect', { x: left + x * bw + 1, y: y(b + v), width: Math.max(1, bw - 2), height: Math.max(0, y(b) - y(b + v)),
        fill: colour, 'data-role': role, 'data-day': r.key, 'data-tokens': v });
      rect.append(el('title', {}, `${role} ${r.key}: ${v} tokens`));
      svg.append(rect);
      base.set(r.key, b + v);
    }
  });
  const every = Math.ceil(list.length / 8);
  list.forEach((d, i) => {
    if (i % every === 0 || i === list.length - 1) {
      svg.append(el('text', { x: left + (i + 0.5) * bw, y: H - 10, 'text-anchor': 'middle', class: 'axis' }, d.slice(5)));
    }
  });
  const legend = h('div', { class: 'legend', id: 'usage-legend' }, perDay.map(([role], i) =>
    h('span', { dataset: { role } }, h('i', { style: `background:${COLOURS[i % COLOURS.length]}` }), role)));
  return h('div', {}, svg, legend);
}
