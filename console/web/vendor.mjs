// vendor.mjs copies the browser's terminal emulator (@xterm/xterm and its
// addons, pinned in package-lock.json) into ../assets/vendor, where go:embed
// takes it. Run by `go generate ./console` after `npm ci` in this folder;
// the copies are committed so a plain `go build` needs no Node.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'assets', 'vendor');
mkdirSync(out, { recursive: true });

const files = [
  ['@xterm/xterm/lib/xterm.mjs', 'xterm.mjs'],
  ['@xterm/xterm/css/xterm.css', 'xterm.css'],
  ['@xterm/addon-fit/lib/addon-fit.mjs', 'addon-fit.mjs'],
  ['@xterm/addon-unicode11/lib/addon-unicode11.mjs', 'addon-unicode11.mjs'],
];
const versions = [];
for (const [from, to] of files) {
  const src = join(here, 'node_modules', from);
  // The source maps are not shipped: drop the comment that points at them.
  const text = readFileSync(src, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
  writeFileSync(join(out, to), text);
  const pkg = from.split('/').slice(0, 2).join('/');
  const version = JSON.parse(readFileSync(join(here, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  if (!versions.some(v => v.startsWith(pkg + ' '))) versions.push(`${pkg} ${version}`);
}
copyFileSync(join(here, 'node_modules', '@xterm/xterm/LICENSE'), join(out, 'LICENSE-xterm'));
writeFileSync(join(out, 'VERSIONS'), versions.join('\n') + '\n(copied by console/web/vendor.mjs from console/web/package-lock.json; do not edit)\n');
