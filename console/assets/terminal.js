// terminal.js: one role's terminal, rendered by xterm.js from the role's
// own output (GET /v1/roles/{id}/terminal, a WebSocket; see
// console/terminal.go). Read-only by default; "Take control" attaches as
// `shogun attach` does (one typing person at a time, automatic typing
// waits while the person types, the role takes this terminal's size until
// control is released). The box below types a line by the typing rules
// (POST /v1/roles/{id}/type), as `shogun type --submit` does.
import { Terminal } from './vendor/xterm.mjs';
import { FitAddon } from './vendor/addon-fit.mjs';
import { Unicode11Addon } from './vendor/addon-unicode11.mjs';
import { h, post, wsURL, toast, events, roleWhy } from './api.js';

export async function mount(el, { role }) {
  const enc = encodeURIComponent(role);
  const mode = h('span', { class: 'mode muted', id: 'term-mode' }, 'connecting…');
  const state = h('span', { class: 'state', id: 'term-state' }, '');
  const why = h('span', { class: 'why', id: 'term-why', hidden: true });
  const takeBtn = h('button', { id: 'take-control', class: 'primary' }, 'Take control');
  const releaseBtn = h('button', { id: 'release-control', hidden: true }, 'Release control');
  const box = h('div', { class: 'termwrap', id: 'terminal' });
  const input = h('input', { id: 'type-line', placeholder: 'a line to type into ' + role + ' (typed and submitted by the typing rules)', autocomplete: 'off' });
  const typeBtn = h('button', { id: 'type-send' }, 'Type line');
  const typeNote = h('span', { class: 'muted', id: 'type-note' });
  el.append(
    h('div', { class: 'termbar' },
      h('a', { href: '#/team' }, '← Team'),
      h('h1', { style: 'margin:0' }, role),
      state, why, mode, takeBtn, releaseBtn),
    box,
    h('form', { class: 'typebox', onsubmit: ev => { ev.preventDefault(); typeLine(); } }, input, typeBtn),
    typeNote,
  );

  const term = new Terminal({
    allowProposedApi: true, // the unicode11 widths
    cursorBlink: false,
    disableStdin: true,
    fontFamily: 'ui-monospace, "Cascadia Mono", "DejaVu Sans Mono", "Noto Sans Mono CJK JP", Menlo, Consolas, monospace',
    fontSize: 13,
    scrollback: 2000,
    theme: { background: '#000000' },
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.loadAddon(new Unicode11Addon());
  term.unicode.activeVersion = '11';
  term.open(box);
  box.terminal = term; // for the browser tests: the emulator's own view of the screen

  let ws = null;
  let control = false;
  let closed = false;
  let retry = null;

  function setMode(text, isControl) {
    mode.textContent = text;
    box.dataset.mode = isControl ? 'control' : 'watch';
    takeBtn.hidden = isControl;
    releaseBtn.hidden = !isControl;
    term.options.disableStdin = !isControl;
    term.options.cursorBlink = isControl;
  }

  async function connect(wantControl) {
    clearTimeout(retry);
    if (ws) { ws.onclose = null; ws.close(); ws = null; }
    control = wantControl;
    let q = '';
    if (wantControl) {
      // The role takes the size this page has room for.
      const dims = fit.proposeDimensions() || { cols: 100, rows: 30 };
      const cols = Math.max(20, Math.min(dims.cols, 500)), rows = Math.max(5, Math.min(dims.rows, 200));
      q = `?control=1&cols=${cols}&rows=${rows}`;
    }
    const sock = new WebSocket(await wsURL('/v1/roles/' + enc + '/terminal' + q));
    sock.binaryType = 'arraybuffer';
    ws = sock;
    let ended = null;
    sock.onmessage = ev => {
      if (typeof ev.data !== 'string') { term.write(new Uint8Array(ev.data)); return; }
      const m = JSON.parse(ev.data);
      switch (m.type) {
        case 'hello':
          term.resize(m.cols, m.rows);
          setMode(m.control ? 'in control: your keys go to ' + role : 'watching (read-only)', m.control);
          if (m.control) term.focus();
          break;
        case 'paint': term.reset(); break;
        case 'size': term.resize(m.cols, m.rows); break;
        case 'end': ended = m.reason; break;
      }
    };
    sock.onclose = () => {
      if (ws !== sock || closed) return;
      ws = null;
      if (wantControl && ended && /already attached/.test(ended)) {
        toast(ended, true);
        connect(false);
        return;
      }
      setMode((ended || 'the connection closed') + ' — reconnecting…', false);
      retry = setTimeout(() => connect(false), 2000);
    };
  }

  term.onData(d => {
    if (control && ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'input', data: d }));
  });
  term.onResize(({ cols, rows }) => {
    if (control && ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'resize', cols, rows }));
  });
  function onWindowResize() {
    if (control) fit.fit();
  }
  window.addEventListener('resize', onWindowResize);
  takeBtn.onclick = () => connect(true);
  releaseBtn.onclick = () => connect(false);

  // A line is typed by the typing rules: into a role that is not ready it
  // waits until the role is idle, and the page says so while it waits.
  let roleState = '';
  let typing = false;
  function showTyping() {
    typeBtn.textContent = typing ? (roleState && roleState !== 'ready' ? `${roleState} — waits until idle` : 'Typing…') : 'Type line';
    typeNote.textContent = !typing ? ''
      : roleState && roleState !== 'ready' ? `${role} is ${roleState}: the line is typed once it is idle (as shogun type does)`
      : `typing into ${role}…`;
  }

  async function typeLine() {
    const text = input.value;
    if (!text) return;
    typeBtn.disabled = true;
    typing = true;
    showTyping();
    try {
      const r = await post('/v1/roles/' + enc + '/type', { text, submit: true });
      input.value = '';
      toast(r.confirmed ? 'typed and submitted' : 'typed, but the screen did not confirm it: ' + (r.reason || ''), !r.confirmed);
    } catch (e) {
      toast(e.message, true);
    } finally {
      typeBtn.disabled = false;
      typing = false;
      showTyping();
    }
  }

  function showState(r) {
    state.textContent = r ? r.state : 'not running';
    state.className = 'state ' + (r ? r.state : 'stopped');
    roleState = r ? r.state : 'not running';
    why.textContent = roleWhy(r);
    why.hidden = !why.textContent;
    showTyping();
  }
  const closeEvents = events('/v1/events/stream', {
    status: st => showState(st.roles.find(x => x.id === role)),
    role: r => { if (r.id === role) showState(r); },
  });

  connect(false);
  return () => {
    closed = true;
    clearTimeout(retry);
    closeEvents();
    window.removeEventListener('resize', onWindowResize);
    if (ws) { ws.onclose = null; ws.close(); }
    term.dispose();
  };
}
