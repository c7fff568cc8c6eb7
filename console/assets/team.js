// team.js: every role at a glance — state, current task, queue depth,
// seconds since its last output, restarts, a small live preview of its
// screen — with restart / stop / start and enable / disable, and the
// slots in use under agent.max_running with the roles waiting for one. Live through
// two server-sent event streams: /v1/events/stream (role states, and the
// questions waiting for a person, answered here with a button) and
// /v1/console/previews (screens, at most once a second per role); nothing
// polls. The seconds since output tick in the page itself.
import { h, events, post, get, toast, roleWhy } from './api.js';

export function mount(el) {
  const grid = h('div', { class: 'team', id: 'team' });
  const attention = h('div', { id: 'attention' });
  const asked = h('div', { id: 'questions' });
  const summary = h('span', { class: 'muted', id: 'team-summary' });
  const slotsLine = h('p', { class: 'muted', id: 'team-slots', hidden: true });
  el.append(h('div', { class: 'termbar' }, h('h1', { style: 'margin:0' }, 'Team'), summary), slotsLine, attention, asked, grid);

  const cards = new Map(); // role id → {el, fields, reply, at}
  let bounds = {};        // the slots of the last status: max_running, slots_in_use, cli_slots
  let configured = null;  // role id → enabled, from GET /v1/roles when the build has it

  function card(id) {
    let c = cards.get(id);
    if (c) return c;
    const f = {
      name: h('span', { class: 'name' }),
      state: h('span', { class: 'state' }),
      why: h('p', { class: 'why', hidden: true }),
      task: h('dd', { class: 'task' }),
      queue: h('dd', { class: 'queue' }),
      output: h('dd', { class: 'since' }),
      restarts: h('dd', { class: 'restarts' }),
      pid: h('dd', { class: 'pid' }),
      note: h('dd', { class: 'note' }),
      noteLabel: h('dt', {}, ''),
      preview: h('pre', { class: 'preview', title: 'open the terminal' }),
    };
    const act = (label, cls, fn) => h('button', { class: cls, dataset: { action: label.toLowerCase() }, onclick: fn }, label);
    const enc = encodeURIComponent(id);
    f.buttons = {
      restart: act('Restart', '', () => action(`/v1/roles/${enc}/restart`, `restarting ${id}`)),
      stop: act('Stop', 'danger', () => action(`/v1/roles/${enc}/stop`, `stopping ${id}`)),
      start: act('Start', '', () => action(`/v1/roles/${enc}/start`, `starting ${id}`)),
      enable: act('Enable', '', () => action(`/v1/config/roles/${enc}/enable`, `${id} enabled in config/roles.yaml`)),
      disable: act('Disable', 'danger', () => action(`/v1/config/roles/${enc}/disable`, `${id} disabled in config/roles.yaml`)),
    };
    f.preview.addEventListener('click', () => { location.hash = '#/terminal/' + enc; });
    const el = h('section', { class: 'role', dataset: { role: id } },
      h('div', { class: 'head' }, h('a', { class: 'id', href: '#/terminal/' + enc }, id), f.name, f.state),
      f.why,
      h('dl', {},
        h('dt', {}, 'task'), f.task,
        h('dt', {}, 'queue'), f.queue,
        h('dt', {}, 'output'), f.output,
        h('dt', {}, 'restarts'), f.restarts,
        h('dt', {}, 'process'), f.pid,
        f.noteLabel, f.note),
      f.preview,
      h('div', { class: 'actions' }, Object.values(f.buttons)));
    c = { el, f, reply: null, at: 0 };
    cards.set(id, c);
    grid.append(el);
    return c;
  }

  function update(r) {
    const c = card(r.id);
    c.reply = r;
    c.at = performance.now();
    const f = c.f;
    f.name.textContent = r.name && r.name !== r.id ? r.name : '';
    f.state.textContent = r.state;
    f.state.className = 'state ' + r.state;
    c.el.dataset.state = r.state;
    f.why.textContent = roleWhy(r);
    f.why.hidden = !f.why.textContent;
    f.task.replaceChildren(r.task_id
      ? h('a', { href: '#/tasks/' + encodeURIComponent(r.task_id) }, `${r.task_title || r.task_id} (${r.task_status || ''})`)
      : h('span', { class: 'muted' }, 'none'));
    f.queue.textContent = String(r.queue_depth ?? 0);
    f.restarts.textContent = String(r.restarts ?? 0);
    f.pid.textContent = r.pid ? `pid ${r.pid}, up ${fmtSecs(r.uptime_s || 0)}${fmtMemory(r)}` : 'none';
    f.pid.dataset.pid = r.pid || '';
    let note = '', label = '';
    if (r.limited_until) {
      label = 'limited until';
      note = new Date(r.limited_until).toLocaleTimeString() + (r.account ? ` (account ${r.account})` : '');
    } else if (r.budget) { label = 'held'; note = r.budget; }
    else if (r.last_error) { label = 'last error'; note = r.last_error; }
    else if (r.account) { label = 'account'; note = r.account; }
    f.noteLabel.textContent = label;
    f.note.textContent = note;
    f.note.title = note;
    tickOne(c);
    buttons(c);
    showSlots();
  }

  // The slots in use out of their bounds, as `shogun status` says them,
  // and the roles waiting for one. The counts come with each status; who
  // waits is each card's own state, so it follows the role events at once.
  function showSlots() {
    const parts = [];
    if (bounds.max_running) parts.push(`slots ${bounds.slots_in_use || 0}/${bounds.max_running} in use (agent.max_running)`);
    const clis = Object.keys(bounds.cli_slots || {}).sort()
      .map(cli => `${cli} ${bounds.cli_slots[cli].in_use || 0}/${bounds.cli_slots[cli].max}`).join(', ');
    if (clis) parts.push(bounds.max_running ? clis : 'slots in use (agent.max_running_per_cli): ' + clis);
    let line = parts.join(', ');
    const waiting = [...cards].filter(([, c]) => c.reply && c.reply.state === 'waiting-slot').map(([id]) => id);
    if (line && waiting.length) line += '; waiting for a slot: ' + waiting.join(', ');
    slotsLine.textContent = line;
    slotsLine.hidden = !line;
  }

  function buttons(c) {
    const r = c.reply, b = c.f.buttons;
    const running = r && !['stopped', 'not running', 'fatal'].includes(r.state);
    const enabled = configured ? configured.get(c.el.dataset.role) !== false : true;
    b.restart.disabled = !r;
    b.stop.disabled = !running;
    b.start.disabled = running || !enabled;
    b.enable.hidden = enabled;
    b.disable.hidden = !enabled;
  }

  function tickOne(c) {
    const r = c.reply;
    if (!r) { c.f.output.textContent = '—'; return; }
    const s = r.since_output_s + (performance.now() - c.at) / 1000;
    c.f.output.textContent = r.since_output_s > 0 || r.pid ? `${fmtSecs(s)} ago` : 'none yet';
  }

  function status(st) {
    bounds = st;
    const seen = new Set();
    for (const r of st.roles) { update(r); seen.add(r.id); }
    // A role no longer running (stopped by a reload) keeps its card as stopped.
    for (const [id, c] of cards) {
      if (!seen.has(id) && c.reply && c.reply.state !== 'stopped') update({ ...c.reply, state: 'stopped', pid: 0 });
    }
    const counts = Object.entries(st.tasks || {}).map(([k, v]) => `${v} ${k}`).join(', ');
    summary.textContent = roleCounts(st.roles) + (counts ? ` · tasks: ${counts}` : '') + (st.halted ? ` · queue halted: ${st.halted}` : '');
    alerts(st.attention || []);
  }

  // A "rejected …" line is a file the queue refused; it lasts while the
  // file is in runtime/queue/failed/, or until dismissed here.
  function alerts(lines) {
    const rejected = lines.some(a => a.startsWith('rejected '));
    attention.replaceChildren(...lines.map(a => h('p', { class: 'error' }, a)),
      ...(rejected ? [h('button', { id: 'dismiss-rejected', onclick: () => dismiss(lines) }, 'Dismiss rejected files')] : []));
  }

  async function dismiss(lines) {
    try {
      const r = await post('/v1/attention/dismiss');
      toast(`${r.dismissed} rejected-file alert(s) dismissed; the files stay in runtime/queue/failed/`);
      alerts(lines.filter(a => !a.startsWith('rejected ')));
    } catch (e) {
      toast(e.message, true);
    }
  }

  // What waits for a person (GET /v1/questions): a hook's question or a
  // dialog on a role's screen, each with its answers as buttons. The text
  // comes from agents: it is only ever set as text, never as HTML. A
  // permission is answered yes / always / no; any other dialog (trust,
  // sign-in) only by its own options, each button naming the dialog's
  // kind, which is the explicit choice the API requires. Each answer names
  // its question's id: it reaches the question the person saw or none.
  function questions(reply) {
    asked.replaceChildren(...(reply.questions || []).map(q => {
      const enc = encodeURIComponent(q.role);
      const buttons = (q.options || []).map(o => {
        const body = { via: 'console', id: q.id };
        if (q.kind === 'permission' && o.answer) {
          body.decision = o.answer === 'no' ? 'deny' : 'allow';
          body.always = o.answer === 'always';
        } else {
          body.option = o.key;
          body.kind = q.kind;
        }
        const label = q.kind === 'permission' && o.answer ? { yes: 'Yes', always: 'Always', no: 'No' }[o.answer] : `${o.key}. ${o.label}`;
        return h('button', { class: o.answer === 'no' ? 'danger' : '', dataset: { answer: o.answer || o.key }, title: o.label,
          onclick: () => answer(q, enc, body) }, label);
      });
      return h('section', { class: 'question', dataset: { id: q.id, role: q.role, kind: q.kind, source: q.source } },
        h('p', {}, h('strong', {}, q.role), ` (${q.cli}, ${q.kind}): ${q.prompt}`),
        q.subject ? h('pre', { class: 'subject' }, q.subject) : '',
        h('div', { class: 'actions' }, buttons));
    }));
  }

  async function answer(q, enc, body) {
    try {
      const a = await post(`/v1/roles/${enc}/answer`, body);
      toast(`${q.role}: ${a.decision} ${a.subject}`);
    } catch (e) {
      toast(e.message, true);
    }
    loadQuestions();
  }

  async function loadQuestions() {
    try { questions(await get('/v1/questions')); } catch (_) { /* a build without questions */ }
  }

  // The roles by state, in the order the states first appear, as `shogun
  // status` counts them: "5 roles: 3 ready, 2 fatal".
  function roleCounts(roles) {
    if (!roles.length) return 'no roles';
    const n = new Map();
    for (const r of roles) n.set(r.state, (n.get(r.state) || 0) + 1);
    return `${roles.length} ${roles.length === 1 ? 'role' : 'roles'}: ` + [...n].map(([s, k]) => `${k} ${s}`).join(', ');
  }

  // The preview is the bottom of the screen, where the newest output and
  // the composer are, in its colours.
  function screen(p) {
    const pre = card(p.id).f.preview;
    if (!p.running) { pre.textContent = '(not running)'; return; }
    if (p.rows) pre.replaceChildren(...p.rows.flatMap((row, i) => [i ? '\n' : '', ...row.map(styled)]));
    else pre.textContent = p.lines.join('\n').trimEnd();
    pre.scrollTop = pre.scrollHeight;
  }

  async function action(path, done) {
    try {
      await post(path);
      toast(done);
    } catch (e) {
      toast(e.status === 404 || e.status === 405 ? `${path}: not available in this build` : e.message, true);
    }
    loadConfigured();
  }

  async function loadConfigured() {
    try {
      const r = await get('/v1/roles');
      configured = new Map((r.roles || []).map(x => [x.id, x.enabled !== false]));
      for (const x of r.roles || []) {
        if (!cards.has(x.id)) update({ id: x.id, name: x.name, state: x.enabled === false ? 'disabled' : 'stopped', restarts: 0, queue_depth: 0, since_output_s: 0 });
      }
      for (const c of cards.values()) buttons(c);
    } catch (_) { /* the running roles only, without GET /v1/roles */ }
  }

  const closeEvents = events('/v1/events/stream', { status, role: update, questions });
  const closePreviews = events('/v1/console/previews', { screen });
  const ticker = setInterval(() => cards.forEach(tickOne), 1000);
  loadConfigured();
  loadQuestions();
  return () => { closeEvents(); closePreviews(); clearInterval(ticker); };
}

// styled is a span of a preview row (console/previews.go PreviewSpan) as
// text in its colours; the colours are "#rrggbb" or left out.
function styled(s) {
  const hex = c => /^#[0-9a-f]{6}$/.test(c || '') ? c : '';
  let fg = hex(s.fg), bg = hex(s.bg);
  if (s.r) [fg, bg] = [bg || '#d0d7de', fg || '#0d1117'];
  const css = [fg && `color:${fg}`, bg && `background:${bg}`, s.b && 'font-weight:bold', s.f && 'opacity:.6',
    s.i && 'font-style:italic', s.u && 'text-decoration:underline'].filter(Boolean).join(';');
  return css ? h('span', { style: css }, s.t) : s.t;
}

// fmtMemory is the role's tree memory for its process line: ", 312 MB",
// ", 312 MB of 2000 MB" with a memory_max; "" when not measured.
function fmtMemory(r) {
  if (!r.memory_bytes) return '';
  const mb = (b) => `${Math.round(b / 1e6)} MB`;
  return r.memory_max_bytes ? `, ${mb(r.memory_bytes)} of ${mb(r.memory_max_bytes)}` : `, ${mb(r.memory_bytes)}`;
}

function fmtSecs(s) {
  if (s < 60) return `${Math.floor(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.floor(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
