// history.js: the History page. A placeholder until the "pages" part of the
// console (issue 14) replaces this file.
import { h } from './api.js';

export function mount(el) {
  el.append(h('h1', {}, 'History'), h('p', { class: 'placeholder' }, 'The History page is not built yet.'));
}
