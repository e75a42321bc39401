// API tokens (administrators): paged list, create (the secret is shown once), revoke.
'use strict';

(() => {
  const { listPage, t, el, $, $$, api, toast, openDialog, formError, confirmDialog, busy, badge, boot } = App;
  const groups = new Map((boot.groups || []).map((g) => [g.id, g]));
  const list = listPage({ endpoint: '/apitoken/pageList', table: 'tokens-table', fields: { revoked: '0' }, reloadOn: ['revoked'], row });
  const load = list.load;

  const STATE_KIND = { active: 'success', expired: 'warning', revoked: 'muted' };
  const STATE_LABEL = { active: t('tokens_state_active'), expired: t('tokens_state_expired'), revoked: t('tokens_state_revoked') };

  function row(tk) {
    const names = (tk.groups || []).map((id) => el('span', { class: 'chip chip-static' }, groups.has(id) ? groups.get(id).title : '#' + id));
    const stateLabel = STATE_LABEL[tk.state] || tk.state;
    return el('tr', { dataset: { id: tk.id, state: tk.state } },
      el('td', { class: 'col-id mono' }, String(tk.id)),
      el('td', { class: 'strong' }, tk.name),
      el('td', { class: 'chips-cell' }, el('div', { class: 'chips-row' }, names.length ? names : el('span', { class: 'muted' }, '—'))),
      el('td', {}, tk.readOnly ? badge(t('tokens_read_only'), 'muted') : badge(t('tokens_read_write'), 'primary')),
      el('td', { title: tk.revokeUser ? t('tokens_revoked_by', tk.revokeUser, tk.revokeTime || '') : null }, badge(stateLabel, STATE_KIND[tk.state] || 'muted')),
      el('td', { class: 'mono' }, tk.expireTime || t('tokens_never')),
      el('td', { class: 'mono' }, tk.lastUsed || t('tokens_never')),
      el('td', {}, el('span', { class: 'mono' }, tk.createTime || ''), ' ', el('small', { class: 'muted' }, t('tokens_by', tk.createUser))),
      el('td', { class: 'col-actions' },
        tk.state === 'revoked' ? null
          : el('button', { type: 'button', class: 'btn btn-sm btn-danger-outline', dataset: { action: 'revoke' }, onclick: () => revoke(tk) }, t('tokens_revoke'))));
  }

  async function revoke(tk) {
    if (!(await confirmDialog(t('tokens_revoke_ask', tk.name), { ok: t('tokens_revoke'), danger: true }))) return;
    try {
      await api('/apitoken/revoke', { id: tk.id });
      toast(t('tokens_revoked_ok'));
      load();
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  const dlg = document.getElementById('dlg-token');
  const form = document.getElementById('form-token');
  const secretDlg = document.getElementById('dlg-secret');
  const secretBox = document.getElementById('token-secret');

  function openNew() {
    form.reset();
    openDialog(dlg);
    form.elements.namedItem('name').focus();
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const name = form.elements.namedItem('name').value.trim();
    const ids = $$('input[name="groups"]:checked', form).map((c) => c.value);
    if (!name) { formError(form, t('tokens_f_name') + ': ' + t('common_required')); form.elements.namedItem('name').focus(); return; }
    if (!ids.length) { formError(form, t('tokens_f_groups') + ': ' + t('common_required')); return; }
    const params = {
      name, groups: ids,
      readOnly: form.querySelector('input[name="readOnly"]:checked').value,
      expire: form.elements.namedItem('expire').value,
    };
    await busy(form.querySelector('button[type="submit"]'), async () => {
      try {
        const created = await api('/apitoken/insert', params);
        dlg.close();
        showSecret(created);
        load();
      } catch (err) {
        formError(form, err.message);
      }
    });
  });

  function showSecret(created) {
    $('[data-slot="title"]', secretDlg).textContent = t('tokens_secret_title', created.name);
    secretBox.value = created.secret;
    const origin = window.location.origin + boot.base;
    document.getElementById('token-example').textContent =
      'curl -s -X POST ' + origin + '/api/listJobs \\\n  -H \'Authorization: Bearer ' + created.secret + '\' \\\n  -H \'Content-Type: application/json\' -d \'{}\'';
    secretDlg.returnValue = '';
    secretDlg.showModal();
    secretBox.select();
  }

  // The secret leaves the page with its dialog: at once when Done is pressed (the
  // dialog's close event comes a task later), and on any other way out (Escape).
  function forgetSecret() {
    secretBox.value = '';
    document.getElementById('token-example').textContent = '';
  }
  $('form', secretDlg).addEventListener('submit', forgetSecret);
  secretDlg.addEventListener('close', forgetSecret);

  document.getElementById('btn-copy').addEventListener('click', async () => {
    secretBox.select();
    try {
      await navigator.clipboard.writeText(secretBox.value);
      toast(t('tokens_copied'));
    } catch (e) {
      toast(t('tokens_copy_manual'), 'error');
    }
  });

  document.getElementById('btn-new').addEventListener('click', openNew);
  load();
})();
