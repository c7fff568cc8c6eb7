// skills.js: the Skills page — the review `shogun skills review` does, in
// the browser. Each candidate with its distilled text and the tasks it was
// mined from; approve, reject, edit the skill file in a text area (checked
// and saved as the review's editor saves it), and export an approved one
// for codex, copilot or claude in the flat or dir layout, as `shogun
// skills export` writes it.
import { h, get, post, put, toast } from './api.js';
import { useStyles, badge, when } from './pages.js';

// The tabs, and the statuses each shows: an approved skill stays under
// "approved" once exported, with its files.
const TABS = { pending: ['pending'], approved: ['approved', 'exported'], rejected: ['rejected'], all: null };

export function mount(el) {
  useStyles();
  let tab = 'pending';
  const lastExport = new Map(); // name → the files of its export from this page
  const tabs = h('div', { class: 'tabs', id: 'skill-tabs' });
  const note = h('span', { class: 'muted', id: 'skills-count' });
  const list = h('div', { id: 'skills' });
  el.append(
    h('div', { class: 'bar' }, h('h1', {}, 'Skills'), tabs, note,
      h('button', { id: 'skills-refresh', onclick: () => load() }, 'Refresh')),
    h('p', { class: 'muted' }, 'Candidates come from repeated work in the history (shogun skills scan, and after reports while skills.enabled is on).'),
    list);

  function drawTabs() {
    tabs.replaceChildren(...Object.keys(TABS).map(t => h('button', { class: t === tab ? 'active' : '', dataset: { tab: t },
      onclick: () => { tab = t; drawTabs(); load(); } }, t)));
  }

  let seq = 0;
  async function load() {
    const mine = ++seq;
    try {
      const r = await get('/v1/skills?status=all');
      if (mine !== seq) return;
      const shown = r.skills.filter(x => !TABS[tab] || TABS[tab].includes(x.status));
      note.textContent = `${shown.length} ${tab === 'all' ? '' : tab + ' '}candidate(s)`;
      list.replaceChildren(...(shown.length ? shown.map(card)
        : [h('p', { class: 'placeholder' }, tab === 'pending' ? 'Nothing to review.' : 'None.')]));
    } catch (e) {
      list.replaceChildren(h('p', { class: 'error' }, 'Cannot list the skills: ' + e.message));
    }
  }

  function card(s) {
    const enc = encodeURIComponent(s.name);
    const err = h('p', { class: 'form-error' });
    const view = h('div', { class: 'view' },
      h('p', { class: 'description' }, s.description),
      h('pre', { class: 'text body' }, s.body));
    const sources = h('ul', { class: 'sources' }, s.source_tasks.map(t => h('li', {},
      h('a', { href: '#/tasks/' + encodeURIComponent(t.id), class: 'mono' }, t.id),
      t.missing ? h('span', { class: 'muted' }, ' (no longer in the history)')
        : [' ', t.role, ' · ', t.title, ' ', badge(t.status), t.summary ? h('span', { class: 'muted' }, ' — ' + t.summary) : ''])));
    const exported = h('div', { class: 'export-files' });
    const files = lastExport.get(s.name);
    if (files) {
      exported.append(h('ul', {}, files.map(f => h('li', {},
        h('span', { class: 'mono' }, f.path), ` (${f.targets.join(', ')}) `, h('span', { class: 'muted' }, f.written ? 'written' : 'already up to date')))));
    }
    const acts = h('div', { class: 'actions' });
    const el = h('section', { class: 'skill', dataset: { skill: s.name, status: s.status } },
      h('div', { class: 'head' }, h('span', { class: 'name' }, s.name), badge(s.status),
        h('span', { class: 'muted' }, `${s.tasks} task(s) · ${s.kind}${s.edited ? ' · edited' : ''} · updated ${when(s.updated_at)}`)),
      view,
      h('details', { open: true }, h('summary', {}, `source tasks (${s.source_tasks.length < s.tasks ? 'the latest ' + s.source_tasks.length + ' of ' : ''}${s.tasks})`), sources),
      acts, err, exported);

    async function act(fn, done) {
      err.textContent = '';
      try {
        await fn();
        if (done) toast(done);
        load();
      } catch (e) {
        err.textContent = e.message;
      }
    }

    function edit() {
      const area = h('textarea', { class: 'edit-text', spellcheck: 'false' });
      area.value = s.text;
      view.replaceChildren(area);
      acts.replaceChildren(
        h('button', { class: 'primary save', onclick: () => act(async () => {
          const r = await put(`/v1/skills/${enc}`, { text: area.value });
          toast(r.changed ? `edit of ${r.skill.name} kept` : 'no change');
        }) }, 'Save'),
        h('button', { class: 'cancel-edit', onclick: () => load() }, 'Cancel'),
        h('span', { class: 'muted' }, 'the whole skill file: front matter (name, description) and body'));
      area.focus();
    }

    const target = h('select', { class: 'export-target' },
      ...['codex', 'copilot', 'claude', 'all'].map(t => h('option', { value: t }, t)));
    const layout = h('select', { class: 'export-layout', title: 'flat: <name>.md in skills.codex_path / skills.copilot_path; dir: <name>/SKILL.md in .codex/skills, .github/skills, .claude/skills' },
      h('option', { value: 'flat' }, 'flat (<name>.md)'), h('option', { value: 'dir' }, 'dir (<name>/SKILL.md)'));
    // Claude Code loads the dir layout only.
    target.addEventListener('change', () => { if (target.value === 'claude') layout.value = 'dir'; });
    const doExport = () => act(async () => {
      const r = await post(`/v1/skills/${enc}/export`, { target: target.value, layout: layout.value });
      lastExport.set(s.name, r.files);
      toast(`exported ${s.name}`);
    });

    const btn = (label, cls, fn) => h('button', { class: cls, onclick: fn }, label);
    if (s.status === 'pending' || s.status === 'rejected') {
      acts.append(btn('Approve', 'primary approve', () => act(() => post(`/v1/skills/${enc}/approve`), `approved ${s.name}`)));
    }
    if (s.status === 'pending' || s.status === 'approved') {
      acts.append(btn('Reject', 'danger reject', () => act(() => post(`/v1/skills/${enc}/reject`), `rejected ${s.name}`)));
    }
    if (s.status !== 'exported') acts.append(btn('Edit', 'edit', edit));
    if (s.status === 'approved' || s.status === 'exported') {
      acts.append(h('span', { class: 'muted' }, 'export for'), target, layout, btn('Export', 'primary export', doExport));
    }
    return el;
  }

  drawTabs();
  load();
}
