// app.js: the console's router. Each route is a page module with
//
//   export function mount(el, params) → optional cleanup function
//
// mount fills el (emptied for it) and may return a function that the router
// calls when the person leaves the page: close streams and timers there.
// Routes: #/team #/terminal/<role> #/tasks #/tasks/<id> #/history #/approvals #/skills #/roles #/usage

const routes = [
  { re: /^#\/team$/, nav: 'team', module: './team.js' },
  { re: /^#\/terminal\/([^/]+)$/, nav: 'team', module: './terminal.js', params: ['role'] },
  { re: /^#\/tasks$/, nav: 'tasks', module: './tasks.js' },
  { re: /^#\/tasks\/([^/]+)$/, nav: 'tasks', module: './tasks.js', params: ['id'] },
  { re: /^#\/history$/, nav: 'history', module: './history.js' },
  { re: /^#\/approvals$/, nav: 'approvals', module: './approvals.js' },
  { re: /^#\/skills$/, nav: 'skills', module: './skills.js' },
  { re: /^#\/roles$/, nav: 'roles', module: './roles.js' },
  { re: /^#\/usage$/, nav: 'usage', module: './usage.js' },
];

let cleanup = null;
let seq = 0;

async function show() {
  const hash = location.hash || '#/team';
  const route = routes.find(r => r.re.test(hash));
  if (!route) { location.hash = '#/team'; return; }
  const m = hash.match(route.re);
  const params = {};
  (route.params || []).forEach((name, i) => { params[name] = decodeURIComponent(m[i + 1]); });
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('active', a.dataset.route === route.nav);
  }
  const mine = ++seq;
  if (cleanup) { try { cleanup(); } catch (e) { console.error(e); } cleanup = null; }
  const el = document.getElementById('page');
  el.replaceChildren();
  el.dataset.route = route.nav;
  try {
    const mod = await import(route.module);
    if (mine !== seq) return; // the person moved on meanwhile
    cleanup = (await mod.mount(el, params)) || null;
    if (mine !== seq && cleanup) { cleanup(); cleanup = null; }
  } catch (e) {
    console.error(e);
    const p = document.createElement('p');
    p.className = 'error';
    p.textContent = 'This page failed: ' + e.message;
    el.append(p);
  }
}

window.addEventListener('hashchange', show);
show();
