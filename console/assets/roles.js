// roles.js: the Roles page — role management. Every role of
// config/roles.yaml with its state; a form to create one and to edit one;
// delete, enable and disable. Each action is one request of the live
// configuration API (docs/api.md, "Live configuration"): the supervisor
// edits roles.yaml keeping its comments, checks the result with the same
// strict decoder as `shogun start`, saves it, and applies it at once. A
// refused edit saves nothing and comes back with each problem's line and
// column, shown under the form. States follow /v1/events/stream.
import { h, events, get, post, put, del, toast, roleWhy } from './api.js';

// The form's fields, by their roles.yaml keys. kind says how a value is
// read from its input: text, int, list (one per line), env (NAME=value per
// line), bool, or a choice. Keys holding control characters (submit,
// clear_input, interrupt_keys, stop.keys) are left to the file.
const CLIS = ['', 'codex', 'claude', 'copilot', 'gemini', 'generic'];
const FIELDS = [
  { key: 'id', label: 'id', kind: 'text', create: true, hint: 'a-z, 0-9, _ and -, at most 32' },
  { key: 'name', label: 'name', kind: 'text' },
  { key: 'prompt_path', label: 'prompt file', kind: 'text', hint: 'relative to the workspace' },
  { key: 'enabled', label: 'enabled', kind: 'bool' },
  { key: 'cli', label: 'CLI preset', kind: 'choice', choices: CLIS, hint: 'empty: from the program\'s name' },
  { key: 'command.exec', label: 'program', kind: 'text', hint: 'as it runs, ${VAR} expanded' },
  { key: 'command.args', label: 'arguments', kind: 'list', hint: 'one per line' },
  { key: 'command.env', label: 'environment', kind: 'env', hint: 'NAME=value, one per line' },
  { key: 'command.cwd', label: 'working folder', kind: 'text' },
  { key: 'terminal.cols', label: 'columns', kind: 'int', more: true },
  { key: 'terminal.rows', label: 'rows', kind: 'int', more: true },
  { key: 'startup_prompt', label: 'startup prompt', kind: 'area', more: true },
  { key: 'nudge', label: 'nudge', kind: 'area', more: true },
  { key: 'notify', label: 'notify', kind: 'area', more: true },
  { key: 'remind', label: 'remind', kind: 'area', more: true },
  { key: 'submit_delay', label: 'submit delay', kind: 'text', more: true },
  { key: 'ready_pattern', label: 'ready pattern', kind: 'text', more: true },
  { key: 'busy_pattern', label: 'busy pattern', kind: 'text', more: true },
  { key: 'attention_pattern', label: 'attention pattern', kind: 'text', more: true },
  { key: 'limit_pattern', label: 'limit pattern', kind: 'text', more: true },
  { key: 'ready_quiet', label: 'ready after quiet', kind: 'text', more: true },
  { key: 'ack_timeout', label: 'ack timeout', kind: 'text', more: true },
  { key: 'stall_after', label: 'stall after', kind: 'text', more: true },
  { key: 'limit_wait', label: 'limit wait', kind: 'text', more: true },
  { key: 'between_tasks', label: 'between tasks', kind: 'text', more: true },
  { key: 'restart.policy', label: 'restart policy', kind: 'choice', choices: ['', 'on-failure', 'always', 'never'], more: true },
  { key: 'restart.max_restarts', label: 'max restarts', kind: 'int', more: true },
  { key: 'restart.window', label: 'restart window', kind: 'text', more: true },
  { key: 'stop.timeout', label: 'stop timeout', kind: 'text', more: true },
];

export function mount(el) {
  if (!document.querySelector('link[href="/roles.css"]')) {
    document.head.append(h('link', { rel: 'stylesheet', href: '/roles.css' }));
  }
  const problems = h('div', { id: 'config-error' });
  const body = h('tbody');
  const table = h('table', { class: 'roles-table', id: 'roles' },
    h('thead', {}, h('tr', {}, ['role', 'name', 'state', 'CLI', 'program', ''].map(x => h('th', {}, x)))), body);
  const formBox = h('div', { id: 'role-form-box' });
  el.append(
    h('div', { class: 'termbar' },
      h('h1', { style: 'margin:0' }, 'Roles'),
      h('span', { class: 'muted' }, 'config/roles.yaml — changes apply at once'),
      h('button', { class: 'primary', id: 'new-role', onclick: () => openForm(null) }, 'New role'),
      h('button', { id: 'reload-files', title: 'apply config/roles.yaml and config/settings.yaml as they are now', onclick: reload }, 'Reload files')),
    problems, table, formBox);

  let roles = [];               // RoleConfig of GET /v1/roles
  const states = new Map();     // role id → RoleReply from the event stream
  let editing = null;           // the role id being edited, '' for a new one

  async function load() {
    try {
      const r = await get('/v1/roles');
      roles = r.roles || [];
      for (const x of roles) if (x.runtime) states.set(x.id, x.runtime);
      showConfigError(r.config_error);
      render();
    } catch (e) {
      problems.replaceChildren(h('p', { class: 'error' }, 'Cannot list the roles: ' + e.message));
    }
  }

  function showConfigError(ce) {
    problems.replaceChildren();
    if (!ce) return;
    problems.append(h('div', { class: 'config-error' },
      h('strong', {}, 'The configuration files are not in effect'),
      ' — the supervisor runs on with the roles below until they load:',
      problemList(ce.errors, ce.error)));
  }

  function stateOf(r) {
    if (!r.enabled) return 'disabled';
    const s = states.get(r.id);
    return s ? s.state : 'not running';
  }

  // Rows are kept by role id and changed in place: a status event arrives
  // whenever any role changes state, and a row built anew under the
  // pointer would swallow a click and forget an armed Delete. A row is
  // built again only when what it shows of the configuration changed.
  const rows = new Map();       // role id → { tr, key, state, pid, why }
  const armed = new Map();      // role id → the timer that disarms its Delete

  function current(id) { return roles.find(x => x.id === id); }

  function buildRow(r, key) {
    const s = states.get(r.id);
    const enc = encodeURIComponent(r.id);
    const del1 = h('button', { class: 'danger', dataset: { action: 'delete' } }, 'Delete');
    const showArmed = on => {
      if (on) { del1.dataset.armed = '1'; del1.textContent = 'Delete ' + r.id + '?'; }
      else { delete del1.dataset.armed; del1.textContent = 'Delete'; }
    };
    showArmed(armed.has(r.id));
    del1.addEventListener('click', () => {
      if (armed.has(r.id)) { clearTimeout(armed.get(r.id)); armed.delete(r.id); remove(r.id); return; }
      armed.set(r.id, setTimeout(() => { armed.delete(r.id); showArmed(false); }, 5000));
      showArmed(true);
    });
    const state = h('span', { class: 'state' });
    const pid = h('span', { class: 'muted' });
    const why = h('div', { class: 'why', hidden: true });
    const tr = h('tr', { dataset: { role: r.id } },
      h('td', {}, r.enabled && s ? h('a', { href: '#/terminal/' + enc, class: 'mono' }, r.id) : h('span', { class: 'mono' }, r.id)),
      h('td', {}, r.name !== r.id ? r.name : ''),
      h('td', {}, state, pid, why),
      h('td', {}, r.cli),
      h('td', { class: 'mono cmd', title: [r.command.exec, ...r.command.args].join(' ') }, [r.command.exec, ...r.command.args].join(' ')),
      h('td', { class: 'actions' },
        h('button', { dataset: { action: 'edit' }, onclick: () => { const c = current(r.id); if (c) openForm(c); } }, 'Edit'),
        r.enabled
          ? h('button', { class: 'danger', dataset: { action: 'disable' }, onclick: () => edit('POST', `/v1/config/roles/${enc}/disable`, `${r.id} disabled`) }, 'Disable')
          : h('button', { dataset: { action: 'enable' }, onclick: () => edit('POST', `/v1/config/roles/${enc}/enable`, `${r.id} enabled`) }, 'Enable'),
        del1));
    return { tr, key, state, pid, why };
  }

  function render() {
    const want = [];
    for (const r of roles) {
      const s = states.get(r.id);
      const key = JSON.stringify([r.name, r.cli, r.enabled, r.command.exec, r.command.args, !!s]);
      let row = rows.get(r.id);
      if (!row || row.key !== key) {
        const next = buildRow(r, key);
        if (row) row.tr.replaceWith(next.tr);
        row = next;
        rows.set(r.id, row);
      }
      const st = stateOf(r);
      if (row.tr.dataset.state !== st) {
        row.tr.dataset.state = st;
        row.state.className = 'state ' + st.replace(/\s/g, '-');
        row.state.textContent = st;
      }
      const pid = s && s.pid ? ` pid ${s.pid}` : '';
      if (row.pid.textContent !== pid) row.pid.textContent = pid;
      const why = r.enabled ? roleWhy(s) : '';
      if (row.why.textContent !== why) { row.why.textContent = why; row.why.hidden = !why; }
      want.push(row.tr);
    }
    const ids = new Set(roles.map(r => r.id));
    for (const [id, row] of rows) {
      if (ids.has(id)) continue;
      row.tr.remove();
      rows.delete(id);
      clearTimeout(armed.get(id));
      armed.delete(id);
    }
    want.forEach((tr, i) => { if (body.children[i] !== tr) body.insertBefore(tr, body.children[i] || null); });
  }

  // openForm shows the form for role r, or for a new role (null).
  function openForm(r) {
    editing = r ? r.id : '';
    const set = new Set(r ? r.set : []);
    const inputs = new Map();
    const initial = new Map();
    const row = f => {
      const [top] = f.key.split('.');
      const cur = r ? valueOf(r, f.key) : undefined;
      // A key the file does not set shows its default as a placeholder:
      // what the role gets unless a value is written here.
      const fromFile = r && (set.has(top) || f.key === 'enabled');
      let input;
      switch (f.kind) {
        case 'bool':
          input = h('input', { type: 'checkbox', name: f.key });
          input.checked = r ? r.enabled : true;
          break;
        case 'choice':
          input = h('select', { name: f.key }, f.choices.map(c => h('option', { value: c }, c || (cur && !fromFile ? `(${cur})` : '(default)'))));
          input.value = fromFile ? String(cur ?? '') : '';
          break;
        case 'list': case 'env': case 'area':
          input = h('textarea', { name: f.key, rows: f.kind === 'area' ? 3 : 2 });
          break;
        default:
          input = h('input', { type: 'text', name: f.key, autocomplete: 'off', spellcheck: 'false', inputmode: f.kind === 'int' ? 'numeric' : undefined });
      }
      if (f.kind !== 'bool' && f.kind !== 'choice') {
        const text = display(f, cur);
        if (fromFile) input.value = text;
        else input.placeholder = text;
      }
      if (f.key === 'id' && r) input.disabled = true;
      if (!r && f.key === 'prompt_path') input.value = 'roles/ashigaru.md';
      inputs.set(f.key, input);
      initial.set(f.key, readRaw(f, input));
      return h('label', { class: 'field' }, h('span', {}, f.label), input, f.hint ? h('small', { class: 'muted' }, f.hint) : '');
    };
    const errors = h('div', { class: 'form-errors', id: 'form-errors' });
    const form = h('form', { id: 'role-form', class: 'role-form', dataset: { mode: r ? 'edit' : 'create', role: r ? r.id : '' } },
      h('h2', {}, r ? `Edit ${r.id}` : 'New role'),
      h('div', { class: 'fields' }, FIELDS.filter(f => !f.more).map(row)),
      h('details', { open: r && FIELDS.some(f => f.more && set.has(f.key.split('.')[0])) ? true : undefined },
        h('summary', {}, 'More settings'),
        h('div', { class: 'fields' }, FIELDS.filter(f => f.more).map(row))),
      h('p', { class: 'muted' }, r ? 'Only the keys you change are written; a key you empty is removed, and the role takes its default again. Comments and the other roles in the file stay as they are.'
        : 'Keys left empty take their defaults from the CLI preset.'),
      h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'primary', id: 'role-save' }, r ? 'Save' : 'Create'),
        h('button', { type: 'button', onclick: closeForm }, 'Cancel')),
      errors);
    form.addEventListener('submit', async ev => {
      ev.preventDefault();
      errors.replaceChildren();
      let fields;
      try {
        fields = collect(inputs, initial, !r, set);
      } catch (e) {
        errors.replaceChildren(h('p', { class: 'error' }, 'Not saved.'), problemList(e.errors, e.message));
        return;
      }
      if (r && Object.keys(fields).length === 0) { toast('nothing changed'); return; }
      const id = r ? r.id : (inputs.get('id').value || '').trim();
      const ok = r
        ? await edit('PUT', `/v1/config/roles/${encodeURIComponent(id)}`, `${id} saved`, { fields }, errors)
        : await edit('POST', '/v1/config/roles', `${id} created`, { id, fields }, errors);
      if (ok) closeForm();
    });
    formBox.replaceChildren(form);
    form.scrollIntoView({ block: 'nearest' });
    (r ? inputs.get('name') : inputs.get('id')).focus();
  }

  function closeForm() {
    editing = null;
    formBox.replaceChildren();
  }

  // edit sends one edit; on success the list is loaded again and the
  // changes are told, on failure the problems go to errBox (the form's) or
  // a toast. It reports whether the edit was applied.
  async function edit(method, path, done, body, errBox) {
    try {
      const res = method === 'PUT' ? await put(path, body) : method === 'DELETE' ? await del(path, body) : await post(path, body);
      toast(done + describe(res));
      await load();
      return true;
    } catch (e) {
      if (errBox) {
        errBox.replaceChildren(h('p', { class: 'error' }, e.status === 422 ? 'Not saved: the result would not load.' : 'Not saved.'),
          problemList(e.errors, e.message));
      } else {
        toast(e.message, true);
      }
      if (e.status === 422 && !errBox) showConfigError({ error: e.message, errors: e.errors });
      await load();
      return false;
    }
  }

  async function remove(id) {
    if (editing === id) closeForm();
    await edit('DELETE', `/v1/config/roles/${encodeURIComponent(id)}`, `${id} deleted`);
  }

  async function reload() {
    await edit('POST', '/v1/reload', 'configuration applied');
  }

  // Role states as they change; the role list again when the set of
  // running roles or the configuration error changed (the files were
  // edited elsewhere and applied, or refused).
  let lastRunning = null, lastError = '';
  function status(st) {
    const running = (st.roles || []).map(r => r.id);
    states.clear();
    for (const r of st.roles || []) states.set(r.id, r);
    const key = running.slice().sort().join(' ');
    if ((lastRunning !== null && key !== lastRunning) || (st.config_error || '') !== lastError) {
      load();
    } else {
      render();
    }
    lastRunning = key;
    lastError = st.config_error || '';
  }
  function role(r) {
    states.set(r.id, r);
    const tr = body.querySelector(`tr[data-role="${CSS.escape(r.id)}"]`);
    if (!tr) { load(); return; }
    render();
  }

  const close = events('/v1/events/stream', { status, role });
  load();
  return () => close();
}

// problemList shows configuration problems, each with its place.
function problemList(list, fallback) {
  if (!list || list.length === 0) return h('ul', { class: 'problems' }, h('li', {}, fallback || ''));
  return h('ul', { class: 'problems' }, list.map(p => h('li', {},
    h('span', { class: 'where mono' }, p.file + (p.line ? `:${p.line}` + (p.column ? `:${p.column}` : '') : '')),
    ': ' + p.message)));
}

// describe tells what a reload did, for the toast.
function describe(res) {
  const ch = (res && res.changes) || [];
  let s = ch.length ? ': ' + ch.map(c => `${c.action} ${c.role} (${c.keys.join(', ')})`).join('; ') : '';
  if (res && res.at_next_start && res.at_next_start.length) s += `; at the next start: ${res.at_next_start.join(', ')}`;
  return s;
}

// valueOf reads key (perhaps dotted) of a RoleConfig.
function valueOf(r, key) {
  return key.split('.').reduce((v, k) => (v == null ? undefined : v[k]), r);
}

// display is a value as its input shows it.
function display(f, v) {
  if (v === undefined || v === null) return '';
  if (f.kind === 'list') return v.join('\n');
  if (f.kind === 'env') return Object.entries(v).map(([k, x]) => `${k}=${x}`).join('\n');
  return String(v);
}

// readRaw is an input's value as text, to tell whether a person changed it.
function readRaw(f, input) {
  return f.kind === 'bool' ? String(input.checked) : input.value;
}

// collect builds a role edit's fields from the inputs: for a new role
// every key given, for an edit every key whose input changed (an emptied
// input removes the key). Values are sent as typed, numbers as numbers when
// they are: the supervisor checks them, and says where a bad one is.
function collect(inputs, initial, creating, set) {
  const fields = {};
  const problems = []; // every problem of the form, not only the first
  for (const f of FIELDS) {
    if (f.key === 'id') continue;
    const input = inputs.get(f.key);
    const raw = readRaw(f, input);
    if (!creating && raw === initial.get(f.key)) continue;
    if (creating && raw === '') continue;
    if (raw === '') {
      fields[f.key] = null;
      continue;
    }
    switch (f.kind) {
      case 'bool': fields[f.key] = input.checked; break;
      case 'int': fields[f.key] = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw; break;
      case 'list': fields[f.key] = raw.split('\n').map(x => x.replace(/\r$/, '')).filter(x => x !== ''); break;
      case 'env': {
        const env = {};
        for (const line of raw.split('\n')) {
          if (line.trim() === '') continue;
          const i = line.indexOf('=');
          if (i <= 0) { problems.push(`environment: "${line}" is not NAME=value`); continue; }
          env[line.slice(0, i).trim()] = line.slice(i + 1);
        }
        fields[f.key] = env;
        break;
      }
      default: fields[f.key] = raw;
    }
  }
  // A new role's command needs its program; one given only in parts is
  // written as one mapping, exec first.
  if (creating && !fields['command.exec'] && Object.keys(fields).some(k => k.startsWith('command.'))) {
    problems.push('the program is needed when arguments, environment or working folder are given');
  }
  if (problems.length) {
    const e = new Error(problems.join('; '));
    e.errors = problems.map(message => ({ file: 'the form', message }));
    throw e;
  }
  return fields;
}
