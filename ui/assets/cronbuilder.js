// The job form's cron builder: one row per field of a Quartz expression (second,
// minute, hour, day of month, month, day of week, year), each with the forms Quartz
// accepts there; it writes the expression into the cron field and reads a typed one
// back. The server still checks the expression (and shows the next fire times).
'use strict';

(() => {
  const { t, el, clear } = App;

  // Each field: its text key, its range, and the modes it offers beyond every/step/
  // range/list/custom.
  const FIELDS = [
    { key: 'cron_f_second', min: 0, max: 59 },
    { key: 'cron_f_minute', min: 0, max: 59 },
    { key: 'cron_f_hour', min: 0, max: 23 },
    { key: 'cron_f_dom', min: 1, max: 31, extra: ['none', 'last', 'weekday'] },
    { key: 'cron_f_month', min: 1, max: 12 },
    { key: 'cron_f_dow', min: 1, max: 7, extra: ['none', 'lastOf', 'nth'] },
    { key: 'cron_f_year', min: 1970, max: 2099, extra: ['omit'], optional: true },
  ];
  const BASE_MODES = ['every', 'step', 'range', 'list'];
  const modeKey = (m) => 'cron_mode_' + m; // cron_mode_every, cron_mode_step, …

  // parse reads one field's text into { mode, a, b, text }; what no mode describes is
  // kept as custom text.
  function parse(f, s) {
    const modes = BASE_MODES.concat(f.extra || []);
    const has = (m) => modes.includes(m);
    let m;
    if (s === undefined || s === '') return has('omit') ? { mode: 'omit' } : { mode: 'every' };
    if (s === '*') return { mode: 'every' };
    if (s === '?' && has('none')) return { mode: 'none' };
    if (s === 'L' && has('last')) return { mode: 'last' };
    if ((m = /^(\d+)W$/.exec(s)) && has('weekday')) return { mode: 'weekday', a: m[1] };
    if ((m = /^(\w+)L$/.exec(s)) && has('lastOf')) return { mode: 'lastOf', a: m[1] };
    if ((m = /^(\w+)#(\d)$/.exec(s)) && has('nth')) return { mode: 'nth', a: m[1], b: m[2] };
    if ((m = /^(\*|\w+)\/(\d+)$/.exec(s))) return { mode: 'step', a: m[1] === '*' ? String(f.min) : m[1], b: m[2] };
    if ((m = /^(\w+)-(\w+)$/.exec(s))) return { mode: 'range', a: m[1], b: m[2] };
    if (/^\w+(,\w+)*$/.test(s)) return { mode: 'list', text: s };
    return { mode: 'custom', text: s };
  }

  // write turns a field's state back into its text ('' for an omitted year).
  function write(f, st) {
    const a = String(st.a || '').trim() || String(f.min);
    const b = String(st.b || '').trim();
    switch (st.mode) {
      case 'every': return '*';
      case 'none': return '?';
      case 'last': return 'L';
      case 'omit': return '';
      case 'weekday': return a + 'W';
      case 'lastOf': return a + 'L';
      case 'nth': return a + '#' + (b || '1');
      case 'step': return a + '/' + (b || '1');
      case 'range': return a + '-' + (b || String(f.max));
      case 'list': return String(st.text || '').replace(/\s+/g, '') || String(f.min);
      default: return String(st.text || '').trim() || '*';
    }
  }

  // Which inputs a mode shows, with the text keys of their labels.
  const INPUTS = {
    step: [['a', 'cron_in_from'], ['b', 'cron_in_every']],
    range: [['a', 'cron_in_from'], ['b', 'cron_in_to']],
    weekday: [['a', 'cron_in_day']],
    lastOf: [['a', 'cron_in_weekday']],
    nth: [['a', 'cron_in_weekday'], ['b', 'cron_in_nth']],
    list: [['text', 'cron_in_values']],
    custom: [['text', 'cron_in_text']],
  };

  // cronBuilder fills box with the builder of input's expression. It calls changed
  // after writing a new expression into input.
  function cronBuilder(box, input, changed) {
    const rows = FIELDS.map((f, i) => {
      const modes = BASE_MODES.concat(f.extra || [], ['custom']);
      const mode = el('select', { class: 'cron-mode', 'aria-label': t(f.key), dataset: { field: String(i) } },
        modes.map((m) => el('option', { value: m }, t(modeKey(m)))));
      const inputs = {};
      for (const k of ['a', 'b', 'text']) {
        inputs[k] = el('input', { type: 'text', class: 'mono cron-in cron-in-' + k, spellcheck: 'false', autocomplete: 'off', dataset: { part: k } });
      }
      const row = el('div', { class: 'cron-row', dataset: { field: String(i) } },
        el('span', { class: 'cron-name' }, t(f.key)), mode,
        ['a', 'b', 'text'].map((k) => el('label', { class: 'cron-part', dataset: { part: k } }, el('span', { class: 'cron-part-label' }), inputs[k])),
        el('code', { class: 'cron-out' }));
      return { f, row, mode, inputs };
    });
    clear(box);
    rows.forEach((r) => box.appendChild(r.row));

    function showInputs(r) {
      const shown = INPUTS[r.mode.value] || [];
      for (const lab of r.row.querySelectorAll('.cron-part')) {
        const p = shown.find((x) => x[0] === lab.dataset.part);
        lab.hidden = !p;
        if (p) lab.querySelector('.cron-part-label').textContent = t(p[1]);
      }
    }

    function state(r) {
      return { mode: r.mode.value, a: r.inputs.a.value, b: r.inputs.b.value, text: r.inputs.text.value };
    }

    // load shows an expression in the rows.
    function load(expr) {
      const parts = String(expr || '').trim().split(/\s+/).filter(Boolean);
      rows.forEach((r, i) => {
        const st = parse(r.f, parts.length ? parts[i] : (i === 5 ? '?' : i === 6 ? '' : i === 0 ? '0' : '*'));
        r.mode.value = st.mode;
        r.inputs.a.value = st.a || '';
        r.inputs.b.value = st.b || '';
        r.inputs.text.value = st.text || '';
        r.row.querySelector('.cron-out').textContent = write(r.f, st) || '—';
        showInputs(r);
      });
    }

    // compose writes the rows' expression into the cron field.
    function compose() {
      const parts = rows.map((r) => {
        const s = write(r.f, state(r));
        r.row.querySelector('.cron-out').textContent = s || '—';
        return s;
      });
      input.value = parts.filter((s, i) => s !== '' || i < 6).join(' ').trim();
      changed();
    }

    rows.forEach((r) => {
      r.mode.addEventListener('change', () => {
        // A mode keeps what fits it: the first value of a list becomes a start, and so on.
        if (!r.inputs.a.value && r.inputs.text.value) r.inputs.a.value = r.inputs.text.value.split(/[,\-/#]/)[0];
        if (r.mode.value === 'list' && !r.inputs.text.value) r.inputs.text.value = r.inputs.a.value || String(r.f.min);
        showInputs(r);
        compose();
      });
      for (const x of Object.values(r.inputs)) x.addEventListener('input', compose);
    });
    input.addEventListener('input', () => load(input.value));
    load(input.value);
    return { load };
  }

  App.cronBuilder = cronBuilder;
})();
