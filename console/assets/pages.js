// pages.js: what the Tasks, History, Skills and Approvals pages share — their
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

/**
 * approvalsTable(list) is decisions on agents' actions (GET /v1/approvals,
 * a task's approvals) as a table, newest last: the command, path, URL or
 * tool as the agent gave it, who decided and why.
 */
export function approvalsTable(list) {
  const by = a => a.decided_by === 'person' ? `a person (${a.via || '?'})` : (a.decided_by || 'waiting');
  return h('table', { class: 'list approvals' },
    h('thead', {}, h('tr', {}, ['asked', 'role', 'task', 'CLI', 'action', 'decision', 'by', 'why'].map(x => h('th', {}, x)))),
    h('tbody', {}, list.map(a => h('tr', { dataset: { approval: String(a.id), decision: a.decision } },
      h('td', { class: 'muted' }, when(a.asked_at)),
      h('td', {}, a.role),
      h('td', {}, a.task_id ? h('a', { href: '#/tasks/' + encodeURIComponent(a.task_id), class: 'mono' }, a.task_id) : ''),
      h('td', {}, a.cli),
      h('td', {}, h('span', { class: 'muted' }, a.kind + ' '), h('code', { class: 'subject' }, a.subject)),
      h('td', {}, badge(a.decision), a.asked ? h('span', { class: 'muted' }, ' asked') : ''),
      h('td', {}, by(a)),
      h('td', { class: 'why' }, [a.rule, a.reason, a.note].filter(Boolean).join(' · '))))));
}
