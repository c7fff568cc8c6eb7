// team.js: every role at a glance. (Being built: live updates and actions.)
import { h, get } from './api.js';

export async function mount(el) {
  el.append(h('h1', {}, 'Team'));
  const grid = h('div', { class: 'team', id: 'team' });
  el.append(grid);
  async function load() {
    const st = await get('/v1/status');
    grid.replaceChildren(...st.roles.map(r => h('section', { class: 'role', dataset: { role: r.id } },
      h('div', { class: 'head' }, h('a', { class: 'id', href: '#/terminal/' + encodeURIComponent(r.id) }, r.id),
        h('span', { class: 'state ' + r.state }, r.state)))));
  }
  await load();
  const timer = setInterval(() => load().catch(() => {}), 3000);
  return () => clearInterval(timer);
}
