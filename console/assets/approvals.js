// approvals.js: the Approvals page — every decision on an agent's action
// that config/policy.yaml covers (what `shogun approvals` lists): by the
// policy, by a person, by the time-out. The questions still waiting are
// answered on the Team page.
import { h, get } from './api.js';
import { useStyles, approvalsTable } from './pages.js';

// The page shows the latest decisions; `shogun approvals --since` goes further back.
const LIMIT = 200;

export function mount(el) {
  useStyles();
  let only = 'all';
  const note = h('span', { class: 'muted', id: 'approvals-count' });
  const tabs = h('div', { class: 'tabs', id: 'approval-tabs' });
  const list = h('div', { id: 'approvals' });
  el.append(
    h('div', { class: 'bar' }, h('h1', {}, 'Approvals'), tabs, note,
      h('button', { id: 'approvals-refresh', onclick: () => load() }, 'Refresh')),
    h('p', { class: 'muted' }, 'Each action a CLI asked about under config/policy.yaml, and who decided. Questions waiting for a person are answered on the ',
      h('a', { href: '#/team' }, 'Team'), ' page.'),
    list);

  function drawTabs() {
    tabs.replaceChildren(...['all', 'allow', 'deny', 'pending'].map(t => h('button', { class: t === only ? 'active' : '', dataset: { tab: t },
      onclick: () => { only = t; drawTabs(); load(); } }, t)));
  }

  let seq = 0;
  async function load() {
    const mine = ++seq;
    try {
      const r = await get(`/v1/approvals?limit=${LIMIT}`);
      if (mine !== seq) return;
      const shown = r.approvals.filter(a => only === 'all' || a.decision === only);
      note.textContent = `${shown.length} decision(s)` + (r.approvals.length === LIMIT ? ` among the latest ${LIMIT}` : '');
      list.replaceChildren(shown.length ? approvalsTable(shown)
        : h('p', { class: 'placeholder' }, only === 'all' ? 'No action has been asked about yet.' : 'None.'));
    } catch (e) {
      list.replaceChildren(h('p', { class: 'error' }, 'Cannot list the approvals: ' + e.message));
    }
  }

  drawTabs();
  load();
  const timer = setInterval(load, 5000);
  return () => clearInterval(timer);
}
