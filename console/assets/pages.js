// pages.js: what the Tasks, History and Skills pages share — their
// stylesheet, times and statuses shown alike, the roles to choose from.
// Everything agents wrote is put in the page as text (h() of api.js),
// never as markup.
import { h, get } from './api.js';

/** useStyles() loads pages.css once. */
export function useStyles() {
  if (!document.querySelector('link[href="/pages.css"]')) {
    document.head.append(h('link', { rel: 'stylesheet', href: '/pages.css' }));
  }
}

/** The task statuses, in the order a task goes through them. */
export const STATUSES = ['queued', 'assigned', 'delivered', 'undelivered', 'stalled', 'done', 'failed', 'blocked', 'cancelled'];

/** closed(status) says a task is finished. */
export const closed = s => ['done', 'failed', 'blocked', 'cancelled'].includes(s);

/** retryable(status) says POST /v1/tasks/{id}/retry takes the task. */
export const retryable = s => ['stalled', 'undelivered', 'failed'].includes(s);

/** when(iso) is a time in the person's zone, '' for none. */
export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (isNaN(d)) return '';
  const p = n => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** span(fromIso, toIso) is how long it took, '' when unknown. */
export function span(from, to) {
  if (!from || !to) return '';
  const s = Math.max(0, (new Date(to) - new Date(from)) / 1000);
  if (s < 60) return `${s.toFixed(1)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

/** badge(status) is a task's status as a coloured label. */
export const badge = status => h('span', { class: 'tstatus ' + status, dataset: { status } }, status);

/**
 * roles() resolves to the configured roles, [{id, name, enabled, cols,
 * rows}], from GET /v1/roles, or the running ones from GET /v1/status when
 * the configuration cannot be listed.
 */
export async function roles() {
  try {
    const r = await get('/v1/roles');
    return (r.roles || []).map(x => ({ id: x.id, name: x.name, enabled: x.enabled !== false,
      cols: x.terminal && x.terminal.cols, rows: x.terminal && x.terminal.rows }));
  } catch (_) {
    const st = await get('/v1/status');
    return st.roles.map(x => ({ id: x.id, name: x.name, enabled: true }));
  }
}

/** options(select, values, chosen) fills a select with [value, label] pairs. */
export function options(select, values, chosen) {
  select.replaceChildren(...values.map(([v, label]) => {
    const o = h('option', { value: v }, label);
    if (v === chosen) o.selected = true;
    return o;
  }));
}

/** debounce(fn, ms) calls fn once the calls have stopped for ms. */
export function debounce(fn, ms) {
  let t = null;
  return (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), ms); };
}
