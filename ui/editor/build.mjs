// Builds the GLUE editor bundle, ui/assets/editor.js, from src/editor.js and the
// exact package versions of package-lock.json (npm ci first). The output depends on
// nothing else, so the same lock file gives the same bytes; ui/editor_test.go checks
// that the committed bundle is this build's. `node build.mjs OUT` writes elsewhere.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] || resolve(here, '../assets/editor.js'));

await build({
  entryPoints: [resolve(here, 'src/editor.js')],
  outfile: out,
  bundle: true,
  format: 'iife',
  minify: true,
  target: ['es2020'],
  legalComments: 'none', // the licences are in NOTICE
  charset: 'utf8',
  sourcemap: false,
  logLevel: 'warning',
  banner: { js: '// The GLUE editor: CodeMirror 6 (MIT), bundled by ui/editor/build.mjs. Do not edit; see NOTICE.' },
});
const sum = createHash('sha256').update(readFileSync(out)).digest('hex');
if (!process.argv[2]) writeFileSync(resolve(here, 'editor.js.sha256'), sum + '  ui/assets/editor.js\n');
console.log(sum + '  ' + out);
