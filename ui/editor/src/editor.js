// The GLUE editor: CodeMirror 6 with line numbers, search, undo history, bracket
// matching and the syntax of each GLUE language. Built into ui/assets/editor.js
// (node build.mjs); the console's glue.js uses window.GlueEditor when it is there.
import { EditorState, Compartment } from '@codemirror/state';
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection, highlightSpecialChars,
} from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import {
  StreamLanguage, syntaxHighlighting, HighlightStyle, bracketMatching, indentOnInput, foldGutter, foldKeymap,
} from '@codemirror/language';
import { searchKeymap, highlightSelectionMatches } from '@codemirror/search';
import { tags } from '@lezer/highlight';
import { shell } from '@codemirror/legacy-modes/mode/shell';
import { python } from '@codemirror/legacy-modes/mode/python';
import { powerShell } from '@codemirror/legacy-modes/mode/powershell';
import { javascript } from '@codemirror/legacy-modes/mode/javascript';
import { java } from '@codemirror/legacy-modes/mode/clike';
import { php } from '@codemirror/lang-php';

// languages maps a GLUE type to its syntax.
const languages = {
  GLUE_SHELL: () => StreamLanguage.define(shell),
  GLUE_PYTHON: () => StreamLanguage.define(python),
  GLUE_PYTHON2: () => StreamLanguage.define(python),
  GLUE_POWERSHELL: () => StreamLanguage.define(powerShell),
  GLUE_NODEJS: () => StreamLanguage.define(javascript),
  GLUE_GROOVY: () => StreamLanguage.define(java),
  GLUE_PHP: () => php(), // <?php … ?> with HTML around, as PHP files are
};

// A dark theme matching the console's editor colours.
const theme = EditorView.theme({
  '&': { height: '100%', color: '#dbe4f5', backgroundColor: '#0f1522', fontSize: '13px' },
  '.cm-scroller': { fontFamily: 'var(--mono)', lineHeight: '1.6' },
  '.cm-content': { caretColor: '#7dd3fc', padding: '12px 0' },
  '.cm-gutters': { backgroundColor: '#0b101b', color: '#55607a', borderRight: '1px solid #1e2638' },
  '.cm-activeLine': { backgroundColor: '#151d2e' },
  '.cm-activeLineGutter': { backgroundColor: '#151d2e', color: '#8b97b3' },
  '&.cm-focused .cm-cursor': { borderLeftColor: '#7dd3fc' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': { backgroundColor: '#264f78' },
  '.cm-matchingBracket': { backgroundColor: '#2b3a55', outline: '1px solid #4b5f86' },
  '.cm-panels': { backgroundColor: '#0b101b', color: '#dbe4f5' },
}, { dark: true });

const colours = HighlightStyle.define([
  { tag: [tags.keyword, tags.controlKeyword, tags.operatorKeyword, tags.definitionKeyword, tags.moduleKeyword], color: '#c792ea' },
  { tag: [tags.string, tags.special(tags.string), tags.regexp], color: '#c3e88d' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: '#f78c6c' },
  { tag: [tags.comment, tags.lineComment, tags.blockComment, tags.meta], color: '#697598', fontStyle: 'italic' },
  { tag: [tags.variableName, tags.special(tags.variableName)], color: '#dbe4f5' },
  { tag: [tags.function(tags.variableName), tags.function(tags.propertyName)], color: '#82aaff' },
  { tag: [tags.typeName, tags.className, tags.namespace], color: '#ffcb6b' },
  { tag: [tags.propertyName, tags.attributeName], color: '#89ddff' },
  { tag: [tags.operator, tags.punctuation, tags.bracket], color: '#a6b3cc' },
  { tag: tags.standard(tags.variableName), color: '#82aaff' },
]);

// create puts an editor into parent. opts: doc, glueType, readOnly, label, nonce (of
// the page's style-src, for the editor's own styles), onChange(doc), onSave(). It returns { get value, set value, focus(), view }.
function create(parent, opts) {
  const lang = languages[opts.glueType];
  const editable = new Compartment();
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: opts.doc || '',
      extensions: [
        lineNumbers(), highlightActiveLineGutter(), highlightSpecialChars(), history(), foldGutter(), drawSelection(),
        indentOnInput(), bracketMatching(), highlightActiveLine(), highlightSelectionMatches(),
        syntaxHighlighting(colours), theme, EditorState.tabSize.of(4),
        lang ? lang() : [],
        editable.of([EditorState.readOnly.of(!!opts.readOnly), EditorView.editable.of(!opts.readOnly)]),
        keymap.of([
          { key: 'Mod-s', preventDefault: true, run: () => { if (opts.onSave) opts.onSave(); return true; } },
          ...defaultKeymap, ...historyKeymap, ...searchKeymap, ...foldKeymap, indentWithTab,
        ]),
        EditorView.updateListener.of((u) => { if (u.docChanged && opts.onChange) opts.onChange(u.state.doc.toString()); }),
        EditorView.cspNonce.of(opts.nonce || ''),
        EditorView.contentAttributes.of({ 'aria-label': opts.label || 'GLUE', spellcheck: 'false', autocapitalize: 'off' }),
      ],
    }),
  });
  return {
    view,
    get value() { return view.state.doc.toString(); },
    set value(s) { view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: s } }); },
    focus() { view.focus(); },
  };
}

window.GlueEditor = { create, languages: Object.keys(languages) };
