#!/usr/bin/env node
// check.js: syntax check of PowerShell scripts without PowerShell.
//
// usage: node tools/psparse/check.js FILE.ps1...
//
// Each file is parsed with the tree-sitter PowerShell grammar
// (tree-sitter-powershell, its WebAssembly build, run by web-tree-sitter: no
// native code, nothing downloaded at run time). Every ERROR node (text the
// grammar cannot place) and MISSING node (a token the parser had to invent,
// such as a closing brace) is printed as
//
//   file:line:col: syntax error: ...
//
// with 1-based line and column (in characters). A file with non-ASCII text
// but no UTF-8 byte order mark is reported too (file:line:col: encoding: ...):
// Windows PowerShell 5.1 reads such a file in the ANSI code page and would
// misread it.
//
// Exit codes: 0 all files parse; 1 a syntax error in some file; 2 bad usage or
// a file that cannot be read.
//
// This is a grammar check, not PowerShell's own parser: it catches unbalanced
// brackets and quotes, broken statements, bad here-strings and the like, but
// not every error PowerShell would report (e.g. `try { }` without catch or
// finally, or a misspelt parameter name of a command), and a construct the grammar lacks would be reported although
// PowerShell accepts it (none of ours is).
'use strict';

// Baseline (Liftoff) WebAssembly code only: V8 would otherwise spend several
// seconds of CPU optimising the 1 MB grammar in the background, and node waits
// for that before it exits. Parsing a few scripts needs no optimised code.
require('v8').setFlagsFromString('--liftoff-only');

const fs = require('fs');
const path = require('path');
const { Parser, Language } = require('web-tree-sitter');

const maxPerFile = 10;
const wasmPath = require.resolve('tree-sitter-powershell/tree-sitter-powershell.wasm');

// position returns the 1-based line and column (in UTF-16 code units of the
// decoded text, which is characters for everything but astral symbols) of a
// string index.
function position(lineStarts, index) {
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lineStarts[mid] <= index) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, col: index - lineStarts[lo] + 1 };
}

function snippet(text) {
  const s = text.replace(/\s+/g, ' ').trim();
  return s.length > 40 ? s.slice(0, 37) + '...' : s;
}

// problems returns the syntax errors of one parsed file, in source order.
// Inside an ERROR node only MISSING nodes are reported, not its own ERROR
// children, so that one mistake gives one line, not dozens.
function problems(tree, source) {
  const out = [];
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) {
    if (source.charCodeAt(i) === 10) lineStarts.push(i + 1);
  }
  const visit = (node, insideError) => {
    if (node.isMissing) {
      const p = position(lineStarts, node.startIndex);
      out.push({ ...p, message: `syntax error: missing ${JSON.stringify(node.type)}` });
      return;
    }
    if (node.isError && !insideError) {
      const p = position(lineStarts, node.startIndex);
      const text = source.slice(node.startIndex, node.endIndex);
      out.push({ ...p, message: text.trim() === '' ? 'syntax error: unexpected end of input' : `syntax error: unexpected ${JSON.stringify(snippet(text))}` });
      insideError = true;
    }
    if (!node.hasError && !insideError) return;
    for (let i = 0; i < node.childCount; i++) visit(node.child(i), insideError || node.isError);
  };
  visit(tree.rootNode, false);
  return out;
}

async function main(files) {
  if (files.length === 0 || files.includes('-h') || files.includes('--help')) {
    process.stderr.write('usage: node tools/psparse/check.js FILE.ps1...\n');
    return files.length === 0 ? 2 : 0;
  }
  await Parser.init();
  const language = await Language.load(fs.readFileSync(wasmPath));
  const parser = new Parser();
  parser.setLanguage(language);

  let status = 0;
  for (const file of files) {
    let bytes;
    try {
      bytes = fs.readFileSync(file);
    } catch (err) {
      process.stderr.write(`${file}: ${err.message}\n`);
      status = 2;
      continue;
    }
    const bom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
    const source = bytes.toString('utf8', bom ? 3 : 0);
    const found = problems(parser.parse(source), source);
    if (!bom) {
      const at = source.search(/[^\x00-\x7f]/);
      if (at >= 0) {
        const lineStarts = [0];
        for (let i = 0; i < at; i++) if (source.charCodeAt(i) === 10) lineStarts.push(i + 1);
        const p = position(lineStarts, at);
        found.push({ ...p, message: 'encoding: non-ASCII text in a file without a UTF-8 byte order mark (Windows PowerShell 5.1 would misread it)' });
      }
    }
    found.sort((a, b) => a.line - b.line || a.col - b.col);
    // After the first few, errors are mostly echoes of the first one.
    for (const f of found.slice(0, maxPerFile)) {
      process.stdout.write(`${file}:${f.line}:${f.col}: ${f.message}\n`);
    }
    if (found.length > maxPerFile) {
      process.stdout.write(`${file}: ${found.length - maxPerFile} more error(s) not shown\n`);
    }
    if (found.length > 0 && status === 0) status = 1;
  }
  if (status === 0) {
    process.stdout.write(`psparse: ${files.length} file(s) parse: ${files.map((f) => path.basename(f)).join(', ')}\n`);
  }
  return status;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`psparse: ${err && err.stack ? err.stack : err}\n`);
    process.exitCode = 2;
  },
);
