// Exclusion calendars (administrators): list, create, change, remove; an ICS
// calendar's file can be read from disk into the form.
'use strict';

(() => {
  const { listPage, t, el, $, openDialog, formError, confirmDelete, saveForm, badge, boot } = App;
  const kinds = boot.kinds || {};
  const load = listPage({ endpoint: '/calendar/pageList', table: 'calendars-table', row }).load;

  // summary shows a calendar's days in one line; an ICS file by the days its events
  // cover (how many, first and last) and, under it, the next ones.
  function summary(c) {
    if (c.kind === 'ICS') {
      if (!c.dayCount) return t('calendars_ics_size', c.spec.length.toLocaleString());
      const span = c.dayCount === 1 ? t('calendars_ics_day', c.firstDay) : t('calendars_ics_days', c.dayCount.toLocaleString(), c.firstDay, c.lastDay);
      const next = c.nextDays && c.nextDays.length ? t('calendars_ics_next', c.nextDays.join(', ')) : t('calendars_ics_past');
      return [el('div', { class: 'ics-span' }, span), el('div', { class: 'sub ics-next' }, next)];
    }
    const s = c.spec.replace(/\s+/g, ' ').trim();
    return s.length > 80 ? s.slice(0, 80) + '…' : s;
  }

  function row(c) {
    return el('tr', { dataset: { id: c.id } },
      el('td', { class: 'col-id mono' }, String(c.id)),
      el('td', { class: 'strong' }, c.name),
      el('td', {}, badge(kinds[c.kind] || c.kind, 'muted')),
      el('td', { class: 'mono' }, summary(c)),
      el('td', { class: 'mono' }, c.updateTime || ''),
      el('td', { class: 'col-actions' },
        el('button', { type: 'button', class: 'btn btn-sm', dataset: { action: 'edit' }, onclick: () => openForm(c) }, t('common_edit')), ' ',
        el('button', { type: 'button', class: 'btn btn-sm btn-danger-outline', dataset: { action: 'delete' },
          onclick: () => confirmDelete(t('calendars_delete_ask', c.name), '/calendar/delete', c.id, load) }, t('common_delete'))));
  }

  const dlg = document.getElementById('dlg-calendar');
  const form = document.getElementById('form-calendar');
  const kindSel = document.getElementById('cal-kind');
  const fileIn = document.getElementById('cal-file');

  function syncKind() {
    document.getElementById('cal-hint').textContent = (boot.hints || {})[kindSel.value] || '';
    document.getElementById('cal-file-wrap').hidden = kindSel.value !== 'ICS';
  }

  function openForm(c) {
    form.reset();
    form.elements.namedItem('id').value = c ? c.id : '';
    form.elements.namedItem('name').value = c ? c.name : '';
    kindSel.value = c ? c.kind : 'DATES';
    form.elements.namedItem('spec').value = c ? c.spec : '';
    $('[data-slot="title"]', dlg).textContent = c ? t('calendars_edit', c.name) : t('calendars_new');
    syncKind();
    openDialog(dlg);
    form.elements.namedItem('name').focus();
  }

  fileIn.addEventListener('change', async () => {
    const f = fileIn.files && fileIn.files[0];
    if (f) form.elements.namedItem('spec').value = await f.text();
  });
  kindSel.addEventListener('change', syncKind);

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const v = (n) => form.elements.namedItem(n).value;
    if (!v('name').trim()) { formError(form, t('calendars_f_name') + ': ' + t('common_required')); return; }
    if (!v('spec').trim()) { formError(form, t('calendars_f_spec') + ': ' + t('common_required')); return; }
    await saveForm(document.getElementById('cal-save'), form, dlg, '/calendar/save',
      { id: v('id'), name: v('name').trim(), kind: kindSel.value, spec: v('spec') }, load);
  });

  document.getElementById('btn-new').addEventListener('click', () => openForm(null));
  load();
})();
