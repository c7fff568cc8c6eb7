// tasks.js: the Tasks page. A placeholder until the "pages" part of the
// console (issue 14) replaces this file.
import { h } from './api.js';

export function mount(el) {
  el.append(h('h1', {}, 'Tasks'), h('p', { class: 'placeholder' }, 'The Tasks page is not built yet.'));
}
