// skills.js: the Skills page. A placeholder until the "pages" part of the
// console (issue 14) replaces this file.
import { h } from './api.js';

export function mount(el) {
  el.append(h('h1', {}, 'Skills'), h('p', { class: 'placeholder' }, 'The Skills page is not built yet.'));
}
