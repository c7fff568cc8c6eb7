// terminal.js: one role's terminal. (Being built: live xterm.js view.)
import { h, get } from './api.js';

export async function mount(el, { role }) {
  el.append(h('h1', {}, 'Terminal: ', role));
  const pre = h('pre', { class: 'preview', id: 'screen' });
  el.append(pre);
  const s = await get('/v1/roles/' + encodeURIComponent(role) + '/screen');
  pre.textContent = s.lines.join('\n');
}
