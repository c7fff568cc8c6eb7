// roles.js: the Roles page. A placeholder until the "reload" part of the
// console (issue 14) replaces this file.
import { h } from './api.js';

export function mount(el) {
  el.append(h('h1', {}, 'Roles'), h('p', { class: 'placeholder' }, 'The Roles page is not built yet.'));
}
