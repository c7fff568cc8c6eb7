// api.js: how every page talks to the supervisor. The console's API is the
// control socket's /v1 API (docs/api.md) on the console's port; requests
// that change something carry the CSRF header, whose value the page asks
// for once (GET /v1/console/session). Errors become Error objects whose
// message is the server's one line (and .errors its list, for 422).

let sessionPromise = null;

/** session() resolves to {csrf, workspace, run_id}. */
export function session() {
  if (!sessionPromise) {
    sessionPromise = fetch('/v1/console/session', { credentials: 'same-origin' })
      .then(r => r.ok ? r.json() : r.json().then(b => { throw new Error(b.error || r.statusText); }))
      .catch(e => { sessionPromise = null; throw e; });
  }
  return sessionPromise;
}

/** request(method, path, body?) → parsed JSON, or text for text/plain. */
export async function request(method, path, body) {
  const headers = {};
  if (method !== 'GET' && method !== 'HEAD') {
    headers['X-Shogun-CSRF'] = (await session()).csrf;
  }
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const r = await fetch(path, { method, headers, body: payload, credentials: 'same-origin' });
  const type = r.headers.get('Content-Type') || '';
  const data = type.includes('application/json') ? await r.json() : await r.text();
  if (!r.ok) {
    const err = new Error((data && data.error) || (typeof data === 'string' && data) || r.statusText);
    err.status = r.status;
    err.errors = data && data.errors;
    throw err;
  }
  return data;
}

export const get = path => request('GET', path);
export const post = (path, body) => request('POST', path, body);
export const put = (path, body) => request('PUT', path, body);
export const del = (path, body) => request('DELETE', path, body);

/**
 * events(path, handlers) follows a server-sent event stream of the API
 * and calls handlers[eventName](parsedData) for each event; handlers.open
 * / .error see the connection come and go, and it reconnects by itself.
 * The stream comes over a WebSocket (console/eventsws.go): an EventSource
 * would hold one of the six connections a browser opens to a host, and a
 * few open pages would leave the console's other requests waiting.
 * Returns a function that closes the stream.
 */
export function events(path, handlers) {
  let ws = null;
  let closed = false;
  let retry = null;
  let delay = 500;
  const schedule = () => {
    retry = setTimeout(connect, delay);
    delay = Math.min(delay * 2, 5000);
  };
  async function connect() {
    let url;
    try {
      url = await wsURL(path);
    } catch (_) {
      if (!closed) schedule();
      return;
    }
    if (closed) return;
    const sock = new WebSocket(url);
    ws = sock;
    sock.onopen = () => {
      delay = 500;
      setConn(true);
      handlers.open && handlers.open();
    };
    sock.onmessage = ev => {
      let m;
      try { m = JSON.parse(ev.data); } catch (_) { return; }
      if (!m || m.event === 'open' || m.event === 'error') return;
      const fn = handlers[m.event];
      if (fn) fn(m.data);
    };
    sock.onclose = () => {
      if (ws !== sock || closed) return;
      ws = null;
      setConn(false);
      handlers.error && handlers.error();
      schedule();
    };
  }
  connect();
  return () => {
    closed = true;
    clearTimeout(retry);
    if (ws) { ws.onclose = null; ws.close(); ws = null; }
  };
}

/** wsURL(path) is a WebSocket address on the console for path (with query). */
export async function wsURL(path) {
  const { csrf } = await session();
  const u = new URL(path, location.href);
  u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  u.searchParams.set('csrf', csrf);
  return u.toString();
}

function setConn(live) {
  const el = document.getElementById('conn');
  if (!el) return;
  el.classList.toggle('live', live);
  el.classList.toggle('down', !live);
  el.title = live ? 'live updates' : 'live updates lost; reconnecting';
}

/** toast(message, bad?) shows a short message in the corner. */
export function toast(message, bad = false) {
  const el = document.getElementById('toast');
  if (!el) return;
  el.textContent = message;
  el.classList.toggle('bad', bad);
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.hidden = true; }, bad ? 8000 : 3000);
}

/** h(tag, attrs, ...children) builds an element; text is always text, never HTML. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/**
 * roleWhy(r) says why a role (a RoleReply) takes no task now, as `shogun
 * status` and `shogun send` word it: "backoff (memory 160 MB over
 * memory_max 64 MB)", "held: .claude/settings.local.json sets
 * disableAllHooks"; "" when nothing holds it back. The reasons may hold
 * anything an agent wrote: set the result as text only.
 */
export function roleWhy(r) {
  if (!r) return '';
  const parts = [];
  if (r.state === 'backoff' && r.backoff_reason) parts.push(`backoff (${r.backoff_reason})`);
  if (r.held) parts.push('held: ' + r.held);
  return parts.join('; ');
}
