// tasks.js: the Tasks page. #/tasks hands a task to a role (POST /v1/send,
// the same function as `shogun send`) and lists the tasks with filters
// (role, status, text), their statuses changing live from
// /v1/events/stream. #/tasks/<id> is one task: its task file, attempts and
// submits, timeline, report and the role's log while it worked on it,
// with retry and cancel where the queue takes them.
import { h, get, post, events, toast } from './api.js';
import { useStyles, STATUSES, closed, retryable, when, span, badge, roles, options, debounce, approvalsTable } from './pages.js';
import { short, total } from './usage.js';

export function mount(el, params) {
  useStyles();
  return params && params.id ? detail(el, params.id) : list(el);
}

// retry and cancel are the queue's own actions (POST /v1/tasks/{id}/…).
async function retry(id) {
  try {
    await post(`/v1/tasks/${encodeURIComponent(id)}/retry`);
    toast(`${id} queued again`);
  } catch (e) { toast(e.message, true); }
}

async function cancel(id, reason) {
  try {
    await post(`/v1/tasks/${encodeURIComponent(id)}/cancel`, reason ? { reason } : undefined);
    toast(`${id} cancelled`);
  } catch (e) { toast(e.message, true); }
}

// actions are the buttons a task's status allows.
function actions(t, onCancel) {
  const out = [];
  if (retryable(t.status)) {
    out.push(h('button', { class: 'retry', onclick: () => retry(t.id) }, 'Retry'));
  }
  if (!closed(t.status)) {
    out.push(h('button', { class: 'danger cancel', onclick: () => onCancel(t) }, 'Cancel'));
  }
  return out;
}

// list is #/tasks: the form and the task list.
function list(el) {
  const err = h('p', { class: 'form-error', id: 'send-error' });
  const f = {
    to: h('select', { id: 'send-to', name: 'to', required: true }),
    title: h('input', { id: 'send-title', name: 'title', required: true, maxlength: 500, autocomplete: 'off', placeholder: 'one line' }),
    body: h('textarea', { id: 'send-body', name: 'body', required: true, placeholder: 'what the role is to do' }),
    priority: h('select', { id: 'send-priority', name: 'priority' }),
    tags: h('input', { id: 'send-tags', name: 'tags', autocomplete: 'off', placeholder: 'frontend, docs' }),
    from: h('select', { id: 'send-from', name: 'from' }),
  };
  options(f.priority, [['high', 'high'], ['normal', 'normal'], ['low', 'low']], 'normal');
  const submit = h('button', { class: 'primary', id: 'send-submit', type: 'submit' }, 'Send');
  const field = (label, input, wide) => h('label', { class: 'field' + (wide ? ' wide' : '') }, h('span', {}, label), input);
  const form = h('form', { id: 'send-form', onsubmit: ev => { ev.preventDefault(); send(); } },
    h('div', { class: 'grid2' },
      field('to', f.to), field('title', f.title), field('priority', f.priority),
      field('tags (comma separated)', f.tags), field('from (told when the report comes)', f.from),
      field('body', f.body, true)),
    h('div', { class: 'bar', style: 'margin:.6rem 0 0' }, submit, h('span', { class: 'muted' }, 'written into runtime/queue/commands/ as shogun send does')),
    err);

  const flt = {
    role: h('select', { id: 'filter-role' }),
    status: h('select', { id: 'filter-status' }),
    q: h('input', { type: 'search', id: 'filter-text', placeholder: 'search titles, bodies, reports' }),
  };
  options(flt.status, [['', 'every status'], ...STATUSES.map(s => [s, s])], '');
  const count = h('span', { class: 'muted', id: 'tasks-count' });
  const body = h('tbody');
  const table = h('table', { class: 'list', id: 'tasks' },
    h('thead', {}, h('tr', {}, ['task', 'role', 'status', 'title', 'priority', 'attempts', 'arrived', 'report', ''].map(x => h('th', {}, x)))),
    body);
  const cancelBox = h('div', { id: 'cancel-box' });
  el.append(
    h('div', { class: 'bar' }, h('h1', {}, 'Tasks')),
    h('details', { class: 'panel', open: true }, h('summary', {}, 'Hand a task to a role'), form),
    h('div', { class: 'filters' }, flt.role, flt.status, flt.q, count),
    cancelBox, table);

  const rows = new Map(); // task id → {tr, task}
  let seq = 0;
  let capped = false; // the list was cut at the limit when it loaded

  // The count is of the rows shown: those loaded and those come since.
  function showCount() {
    count.textContent = capped ? `the newest ${rows.size}` : `${rows.size} task(s)`;
  }

  function row(t, fresh) {
    const enc = encodeURIComponent(t.id);
    const tr = h('tr', { dataset: { task: t.id, status: t.status }, class: fresh ? 'fresh' : '' },
      h('td', {}, h('a', { href: '#/tasks/' + enc, class: 'mono' }, t.id)),
      h('td', {}, t.role),
      h('td', { class: 'status' }, badge(t.status)),
      h('td', { class: 'title', title: t.title }, t.title),
      h('td', {}, t.priority),
      h('td', {}, String(t.attempts)),
      h('td', {}, when(t.created_at)),
      h('td', { class: 'summary', title: t.summary || '' }, t.summary || ''),
      h('td', { class: 'actions' }, actions(t, askCancel)));
    return tr;
  }

  function matches(t) {
    return (!flt.role.value || t.role === flt.role.value) && (!flt.status.value || t.status === flt.status.value);
  }

  async function load() {
    const mine = ++seq;
    const q = new URLSearchParams({ limit: '200' });
    if (flt.role.value) q.set('role', flt.role.value);
    if (flt.status.value) q.set('status', flt.status.value);
    if (flt.q.value.trim()) q.set('q', flt.q.value.trim());
    try {
      const r = await get('/v1/tasks?' + q);
      if (mine !== seq) return;
      rows.clear();
      body.replaceChildren(...r.tasks.map(t => { const tr = row(t); rows.set(t.id, { tr, task: t }); return tr; }));
      capped = r.tasks.length === 200;
      showCount();
    } catch (e) {
      count.textContent = 'cannot list the tasks: ' + e.message;
    }
  }

  // A task event: its row changes in place; a new task that the filters
  // let through comes on top. With a text search the server decides what
  // matches, so only the rows shown change.
  function onTask(t) {
    const cur = rows.get(t.id);
    if (cur) {
      const tr = row(t, cur.task.status !== t.status);
      cur.tr.replaceWith(tr);
      rows.set(t.id, { tr, task: t });
      return;
    }
    if (flt.q.value.trim() || !matches(t)) return;
    const tr = row(t, true);
    rows.set(t.id, { tr, task: t });
    body.prepend(tr);
    showCount();
  }

  function askCancel(t) {
    const reason = h('input', { id: 'cancel-reason', placeholder: 'why (told to ' + (t.from || 'nobody') + ')', maxlength: 500 });
    cancelBox.replaceChildren(h('form', { class: 'panel bar', onsubmit: async ev => {
      ev.preventDefault();
      await cancel(t.id, reason.value.trim());
      cancelBox.replaceChildren();
    } }, h('span', {}, `Cancel ${t.id} (${t.title})?`), reason,
    h('button', { class: 'danger', id: 'cancel-confirm', type: 'submit' }, 'Cancel the task'),
    h('button', { type: 'button', onclick: () => cancelBox.replaceChildren() }, 'Keep it')));
    reason.focus();
  }

  async function send() {
    err.textContent = '';
    const tags = f.tags.value.split(/[,\s]+/).map(s => s.trim()).filter(Boolean);
    const req = { to: f.to.value, title: f.title.value.trim(), body: f.body.value, priority: f.priority.value };
    if (tags.length) req.tags = tags;
    if (f.from.value) req.from = f.from.value;
    submit.disabled = true;
    try {
      const r = await post('/v1/send', req);
      toast(`sent to ${req.to}: ${r.id}`);
      f.title.value = '';
      f.body.value = '';
      f.tags.value = '';
    } catch (e) {
      err.textContent = e.message;
    } finally {
      submit.disabled = false;
    }
  }

  roles().then(rs => {
    options(f.to, rs.filter(r => r.enabled).map(r => [r.id, r.name && r.name !== r.id ? `${r.id} (${r.name})` : r.id]), '');
    options(f.from, [['', '(nobody)'], ...rs.map(r => [r.id, r.id])], '');
    options(flt.role, [['', 'every role'], ...rs.map(r => [r.id, r.id])], '');
  }).catch(e => { err.textContent = 'cannot list the roles: ' + e.message; });

  flt.role.addEventListener('change', load);
  flt.status.addEventListener('change', load);
  flt.q.addEventListener('input', debounce(load, 300));
  load();
  const close = events('/v1/events/stream', { task: onTask, dropped: load });
  return close;
}

// tokensFact is what the task's role's CLI recorded while it worked on it
// (docs/usage.md): the sum, then each kind.
function tokensFact(t) {
  return h('span', { id: 'task-tokens', dataset: { total: String(total(t)) } }, short(total(t)),
    h('span', { class: 'muted' }, ` (input ${t.input} · output ${t.output} · cache read ${t.cache_read} · cache write ${t.cache_write} · reasoning ${t.reasoning}) · `),
    h('a', { href: '#/usage' }, 'usage'));
}

// detail is #/tasks/<id>.
function detail(el, id) {
  const enc = encodeURIComponent(id);
  const head = h('div', { class: 'bar' });
  const facts = h('dl', { class: 'facts', id: 'task-facts' });
  const acts = h('div', { class: 'bar', id: 'task-actions' });
  const bodyText = h('pre', { class: 'text', id: 'task-body' });
  const report = h('div', { id: 'task-report' });
  const timeline = h('tbody');
  const taskFile = h('div', { id: 'task-file' });
  const approvals = h('div', { id: 'task-approvals' });
  const log = h('pre', { class: 'text log', id: 'task-log' }, 'loading…');
  const logNote = h('span', { class: 'muted', id: 'task-log-note' });
  const err = h('p', { class: 'form-error', id: 'task-error' });
  el.append(
    h('div', { class: 'bar' }, h('a', { href: '#/tasks' }, '← Tasks')),
    head, err,
    h('div', { class: 'panel' }, facts, acts),
    h('div', { class: 'panel' }, h('h2', {}, 'Task'), bodyText),
    h('div', { class: 'panel' }, h('h2', {}, 'Report'), report),
    h('div', { class: 'panel' }, h('h2', {}, 'Timeline'),
      h('table', { class: 'list timeline', id: 'task-events' },
        h('thead', {}, h('tr', {}, ['when', 'what', 'role', 'detail'].map(x => h('th', {}, x)))), timeline)),
    h('div', { class: 'panel' }, h('h2', {}, 'Approvals'), approvals),
    h('div', { class: 'panel' }, h('h2', {}, 'Task file'), taskFile),
    h('div', { class: 'panel' },
      h('div', { class: 'bar' }, h('h2', { style: 'margin:0' }, 'The role\'s log while it worked on the task'),
        h('button', { id: 'task-log-refresh', onclick: () => loadLog() }, 'Refresh'), logNote),
      log));

  let cur = null;
  const fact = (k, v) => v === '' || v === undefined || v === null ? [] : [h('dt', {}, k), h('dd', {}, v)];
  const taskLink = tid => h('a', { href: '#/tasks/' + encodeURIComponent(tid), class: 'mono' }, tid);

  async function load() {
    let d;
    try {
      d = await get(`/v1/tasks/${enc}`);
    } catch (e) {
      err.textContent = e.status === 404 ? `There is no task ${id}.` : e.message;
      return;
    }
    err.textContent = '';
    const t = d.task;
    const changed = !cur || cur.status !== t.status || cur.updated_at !== t.updated_at;
    cur = t;
    head.replaceChildren(h('h1', { id: 'task-title' }, t.title), badge(t.status), h('span', { class: 'muted mono' }, t.id));
    facts.replaceChildren(
      ...fact('role', h('a', { href: '#/terminal/' + encodeURIComponent(t.role) }, t.role)),
      ...fact('from', t.from || ''),
      ...((t.handed_over || []).length ? fact('handed over', h('ul', { id: 'task-handovers', style: 'margin:0;padding-left:1.1rem' },
        t.handed_over.map(x => h('li', {}, `${when(x.at)} from ${x.from} to ${x.to}: ${x.reason}`)))) : []),
      ...fact('priority', t.priority),
      ...fact('tags', t.tags.join(', ')),
      ...fact('attempts', h('span', { id: 'task-attempts' }, String(d.attempts))),
      ...fact('submits', h('span', { id: 'task-submits' }, String(d.submits))),
      ...fact('arrived', when(t.created_at)),
      ...fact('handed out', when(t.assigned_at)),
      ...fact('delivered', when(t.delivered_at)),
      ...fact('finished', t.finished_at ? `${when(t.finished_at)} (${span(t.assigned_at || t.created_at, t.finished_at)} after it was handed out)` : ''),
      ...fact('tokens', t.tokens ? tokensFact(t.tokens) : ''),
      ...fact('command', h('span', { class: 'mono' }, t.command_id)),
      ...fact('run', h('span', { class: 'mono' }, t.run_id)),
      ...(t.parent ? fact('sent by the role of', taskLink(t.parent)) : []),
      ...(t.root && t.root !== t.id ? fact('first task of the chain', taskLink(t.root)) : []),
      ...((d.subtasks || []).length ? fact('subtasks it caused', h('ul', { id: 'task-subtasks', style: 'margin:0;padding-left:1.1rem' },
        d.subtasks.map(x => h('li', { dataset: { task: x.id } }, taskLink(x.id), ` ${x.role}: ${x.title} `, badge(x.status))))) : []));
    acts.replaceChildren(...actions(t, askCancel));
    bodyText.textContent = t.body;
    const apps = d.approvals || [];
    approvals.replaceChildren(apps.length ? approvalsTable(apps)
      : h('p', { class: 'placeholder' }, 'No action of its role was asked about while it worked on it (config/policy.yaml).'));
    const rp = d.report;
    report.replaceChildren(...(rp ? [
      h('p', {}, badge(rp.status), ' ', h('strong', { id: 'report-summary' }, rp.summary), ' ', h('span', { class: 'muted' }, when(rp.received_at))),
      rp.details ? h('pre', { class: 'text', id: 'report-details' }, rp.details) : '',
      rp.files.length ? h('div', {}, h('span', { class: 'muted' }, 'files'),
        h('ul', { id: 'report-files' }, rp.files.map(x => h('li', { class: 'mono' }, x)))) : '',
      rp.path ? h('p', { class: 'muted mono' }, rp.path) : '',
    ] : [h('p', { class: 'muted' }, closed(t.status) ? (t.summary || 'closed without a report') : 'no report yet')]));
    timeline.replaceChildren(...d.events.map(e => h('tr', { dataset: { kind: e.kind } },
      h('td', {}, when(e.at)), h('td', {}, e.kind), h('td', {}, e.role || ''), h('td', {}, e.detail || ''))));
    taskFile.replaceChildren(d.task_file
      ? h('div', {}, h('p', { class: 'muted mono' }, d.task_file_path), h('pre', { class: 'text' }, d.task_file))
      : h('p', { class: 'muted' }, 'no task file: the task was not handed out, or its file is gone'));
    if (changed) loadLog();
  }

  async function loadLog() {
    if (!cur || !cur.assigned_at) {
      log.textContent = '';
      logNote.textContent = 'not handed out yet';
      return;
    }
    try {
      const text = await get(`/v1/tasks/${enc}/log`);
      log.textContent = text;
      logNote.textContent = closed(cur.status) ? '' : 'the task is open: its log grows';
      log.scrollTop = log.scrollHeight;
    } catch (e) {
      log.textContent = '';
      logNote.textContent = e.message;
    }
  }

  function askCancel(t) {
    const reason = h('input', { id: 'cancel-reason', placeholder: 'why (told to ' + (t.from || 'nobody') + ')', maxlength: 500 });
    acts.replaceChildren(h('form', { class: 'bar', onsubmit: async ev => {
      ev.preventDefault();
      await cancel(t.id, reason.value.trim());
      load();
    } }, reason, h('button', { class: 'danger', id: 'cancel-confirm', type: 'submit' }, 'Cancel the task'),
    h('button', { type: 'button', onclick: () => load() }, 'Keep it')));
    reason.focus();
  }

  load();
  const reload = debounce(load, 150);
  const close = events('/v1/events/stream', { task: t => { if (t.id === id) reload(); }, dropped: reload });
  return close;
}
