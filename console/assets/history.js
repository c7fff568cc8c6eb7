// history.js: the History page — the runs of `shogun start`, the past tasks
// with search (GET /v1/tasks?q=&since=&until=), and each role's log: as the
// text its terminal showed, or rendered with its colours by xterm.js from
// the raw bytes; following live (a server-sent stream that never slows the
// role) and downloadable.
import { Terminal } from './vendor/xterm.mjs';
import { Unicode11Addon } from './vendor/addon-unicode11.mjs';
import { h, get, events } from './api.js';
import { useStyles, STATUSES, when, span, badge, roles, options, debounce } from './pages.js';

export function mount(el) {
  useStyles();
  const cleanups = [];
  el.append(h('div', { class: 'bar' }, h('h1', {}, 'History')));
  runsPanel(el);
  tasksPanel(el);
  cleanups.push(logPanel(el));
  return () => cleanups.forEach(f => f());
}

function runsPanel(el) {
  const body = h('tbody');
  el.append(h('details', { class: 'panel', open: true }, h('summary', {}, 'Runs'),
    h('table', { class: 'list', id: 'runs' },
      h('thead', {}, h('tr', {}, ['run', 'status', 'started', 'ended', 'lasted', 'pid'].map(x => h('th', {}, x)))), body)));
  get('/v1/runs?limit=100').then(r => {
    body.replaceChildren(...r.runs.map(run => h('tr', { dataset: { run: run.id } },
      h('td', { class: 'mono' }, run.id, run.current ? h('span', { class: 'muted' }, ' (this one)') : ''),
      h('td', {}, badge(run.status)),
      h('td', {}, when(run.started_at)),
      h('td', {}, when(run.ended_at)),
      h('td', {}, span(run.started_at, run.ended_at || (run.current ? new Date().toISOString() : ''))),
      h('td', {}, String(run.pid)))));
  }).catch(e => body.replaceChildren(h('tr', {}, h('td', { class: 'error', colspan: 6 }, e.message))));
}

function tasksPanel(el) {
  const f = {
    q: h('input', { type: 'search', id: 'history-search', placeholder: 'words, "a phrase", prefix*' }),
    role: h('select', { id: 'history-role' }),
    status: h('select', { id: 'history-status' }),
    since: h('input', { type: 'date', id: 'history-since', title: 'arrived on or after' }),
    until: h('input', { type: 'date', id: 'history-until', title: 'arrived before' }),
  };
  options(f.status, [['', 'every status'], ...STATUSES.map(s => [s, s])], '');
  options(f.role, [['', 'every role']], '');
  const note = h('span', { class: 'muted', id: 'history-count' });
  const body = h('tbody');
  el.append(h('details', { class: 'panel', open: true }, h('summary', {}, 'Past tasks'),
    h('div', { class: 'filters' }, f.q, f.role, f.status, h('span', { class: 'muted' }, 'from'), f.since, h('span', { class: 'muted' }, 'before'), f.until, note),
    h('table', { class: 'list', id: 'history-tasks' },
      h('thead', {}, h('tr', {}, ['task', 'role', 'status', 'title', 'arrived', 'took', 'report'].map(x => h('th', {}, x)))), body)));
  let seq = 0;
  async function load() {
    const mine = ++seq;
    const q = new URLSearchParams({ limit: '200' });
    for (const k of ['q', 'role', 'status', 'since', 'until']) {
      const v = f[k].value.trim();
      if (v) q.set(k, v);
    }
    try {
      const r = await get('/v1/tasks?' + q);
      if (mine !== seq) return;
      note.textContent = r.tasks.length === 200 ? 'the newest 200 that match' : `${r.tasks.length} task(s)`;
      body.replaceChildren(...r.tasks.map(t => h('tr', { dataset: { task: t.id } },
        h('td', {}, h('a', { href: '#/tasks/' + encodeURIComponent(t.id), class: 'mono' }, t.id)),
        h('td', {}, t.role),
        h('td', {}, badge(t.status)),
        h('td', { class: 'title', title: t.title }, t.title),
        h('td', {}, when(t.created_at)),
        h('td', {}, span(t.assigned_at, t.finished_at)),
        h('td', { class: 'summary', title: t.summary || '' }, t.summary || ''))));
    } catch (e) {
      if (mine === seq) note.textContent = e.message;
    }
  }
  roles().then(rs => options(f.role, [['', 'every role'], ...rs.map(r => [r.id, r.id])], f.role.value)).catch(() => {});
  f.q.addEventListener('input', debounce(load, 300));
  for (const k of ['role', 'status', 'since', 'until']) f[k].addEventListener('change', load);
  load();
}

// logPanel shows one role's log; it returns what closes its stream.
function logPanel(el) {
  const role = h('select', { id: 'log-role' });
  const mode = h('select', { id: 'log-mode', title: 'text: what the terminal showed, escape sequences gone; terminal: the raw output rendered with its colours' });
  options(mode, [['text', 'text'], ['ansi', 'terminal (colours)']], 'text');
  const tail = h('input', { type: 'number', id: 'log-tail', min: 0, value: 500, style: 'width:6rem', title: 'the last lines (0: all)' });
  const follow = h('input', { type: 'checkbox', id: 'log-follow' });
  const download = h('a', { class: 'button', id: 'log-download', download: '' }, 'Download');
  const note = h('span', { class: 'muted', id: 'log-note' });
  const out = h('div', { id: 'log-out' });
  el.append(h('details', { class: 'panel', open: true }, h('summary', {}, 'Role logs'),
    h('div', { class: 'filters' }, role, mode, h('label', {}, 'last ', tail, ' lines'),
      h('label', {}, follow, ' follow live'), download, note),
    out));

  let sizes = new Map(); // role id → [cols, rows]
  let stop = null;       // closes the followed stream
  let seq = 0;

  function close() {
    if (stop) { stop(); stop = null; }
  }

  async function show() {
    close();
    const mine = ++seq;
    const id = role.value;
    if (!id) { out.replaceChildren(h('p', { class: 'muted' }, 'no roles')); return; }
    const enc = encodeURIComponent(id);
    const raw = mode.value === 'ansi';
    const n = Math.max(0, parseInt(tail.value, 10) || 0);
    const q = `strip=${raw ? 0 : 1}&tail=${n}`;
    download.href = `/v1/roles/${enc}/log?strip=${raw ? 0 : 1}&tail=0&download=1`;
    note.textContent = '';
    let write;
    if (raw) {
      const [cols, rows] = sizes.get(id) || [120, 40];
      const box = h('div', { class: 'termlog', id: 'log-term' });
      out.replaceChildren(box);
      const term = new Terminal({ allowProposedApi: true, cols, rows, disableStdin: true, scrollback: 10000, convertEol: false,
        fontFamily: 'ui-monospace, "Cascadia Mono", "DejaVu Sans Mono", "Noto Sans Mono CJK JP", Menlo, Consolas, monospace', fontSize: 12 });
      term.loadAddon(new Unicode11Addon());
      term.unicode.activeVersion = '11';
      term.open(box);
      write = s => term.write(s);
      const prevStop = stop;
      stop = () => { term.dispose(); if (prevStop) prevStop(); };
    } else {
      const pre = h('pre', { class: 'text log', id: 'log-text' });
      out.replaceChildren(pre);
      write = s => {
        pre.append(document.createTextNode(s));
        // Keep the page light on a long follow: the oldest text goes.
        if (pre.childNodes.length > 4000) {
          while (pre.childNodes.length > 3000) pre.firstChild.remove();
        }
        pre.scrollTop = pre.scrollHeight;
      };
    }
    if (follow.checked) {
      const disposeView = stop;
      const closeStream = events(`/v1/roles/${enc}/log?${q}&follow=1`, {
        log: s => { if (typeof s === 'string') write(s); },
        end: e => { note.textContent = 'the log stream ended: ' + ((e && e.error) || ''); closeStream(); },
        open: () => { note.textContent = 'following'; },
        error: () => { note.textContent = 'reconnecting…'; },
      });
      stop = () => { closeStream(); if (disposeView) disposeView(); };
      return;
    }
    try {
      const r = await fetch(`/v1/roles/${enc}/log?${q}`, { credentials: 'same-origin' });
      if (mine !== seq) return;
      if (!r.ok) {
        const b = await r.json().catch(() => ({}));
        out.replaceChildren(h('p', { class: 'muted' }, b.error || r.statusText));
        return;
      }
      if (raw) write(new Uint8Array(await r.arrayBuffer()));
      else write(await r.text());
    } catch (e) {
      note.textContent = e.message;
    }
  }

  roles().then(rs => {
    sizes = new Map(rs.filter(r => r.cols && r.rows).map(r => [r.id, [r.cols, r.rows]]));
    options(role, rs.map(r => [r.id, r.id]), rs.length ? rs[0].id : '');
    show();
  }).catch(e => { note.textContent = 'cannot list the roles: ' + e.message; });
  for (const x of [role, mode, follow]) x.addEventListener('change', show);
  tail.addEventListener('change', show);
  return close;
}
