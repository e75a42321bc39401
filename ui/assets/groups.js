// Executors (administrators): paged list, add/edit with automatic or manual machine
// addresses, delete, and the machines online, each drained or undrained here.
'use strict';

(() => {
  const { saveForm, listPage, t, el, $, append, clear, api, busy, toast, openDialog, formError, confirmDialog, confirmDelete, infoDialog } = App;
  const list = listPage({ endpoint: '/jobgroup/pageList', table: 'groups-table', fields: { appname: '', title: '' }, row });
  const load = list.load;

  // The machines of a group, each with its drain state and the action that changes
  // it; addresses drained and no longer registered stay listed, to be undrained.
  function online(g) {
    const n = (g.registryList || []).length;
    const drained = (g.drained || []).length;
    return el('span', {},
      el('button', {
        type: 'button', class: 'online-btn' + (n ? ' has' : ''), dataset: { action: 'online' },
        onclick: () => infoDialog(t('groups_online_title', g.title), machines(g)),
      }, el('span', { class: 'dot', 'aria-hidden': 'true' }), String(n)),
      drained ? ' ' : null,
      drained ? el('span', { class: 'badge badge-warning', dataset: { slot: 'drained' } }, t('groups_drained_count', drained)) : null);
  }

  function machines(g) {
    const list = g.registryList || [];
    const drained = g.drained || [];
    const gone = drained.filter((a) => !list.includes(a));
    if (!list.length && !gone.length) return el('p', { class: 'muted' }, t('groups_none_online'));
    const item = (a, registered) => {
      const d = drained.includes(a);
      return el('li', { dataset: { address: a, drained: d ? 'yes' : 'no' } }, el('span', { class: 'mono' }, a), ' ',
        d ? el('span', { class: 'badge badge-warning' }, t(registered ? 'groups_drained' : 'groups_drained_gone')) : null, ' ',
        el('button', {
          type: 'button', class: 'btn btn-sm', dataset: { action: d ? 'undrain' : 'drain' },
          onclick: (e) => setDrain(g, a, !d, e.currentTarget),
        }, t(d ? 'groups_undrain' : 'groups_drain')));
    };
    return el('div', {},
      el('p', { class: 'hint' }, t('groups_drain_hint')),
      el('ul', { class: 'plain-list' }, list.map((a) => item(a, true)), gone.map((a) => item(a, false))));
  }

  async function setDrain(g, address, drain, button) {
    if (drain && !(await confirmDialog(t('groups_drain_ask', address), { ok: t('groups_drain') }))) return;
    await busy(button, async () => {
      try {
        await api(drain ? '/jobgroup/drain' : '/jobgroup/undrain', { id: g.id, address });
        const rest = (g.drained || []).filter((a) => a !== address);
        g.drained = drain ? rest.concat([address]) : rest;
        toast(t(drain ? 'groups_drained_ok' : 'groups_undrained_ok', address));
        append(clear($('[data-slot="body"]', document.getElementById('dlg-info'))), [machines(g)]);
        load();
      } catch (err) {
        toast(err.message, 'error');
      }
    });
  }

  function row(g) {
    return el('tr', { dataset: { id: g.id } },
      el('td', { class: 'col-id mono' }, String(g.id)),
      el('td', { class: 'mono strong' }, g.appname),
      el('td', {}, g.title),
      el('td', {}, g.addressType === 0 ? t('groups_auto') : t('groups_manual')),
      el('td', {}, online(g)),
      el('td', { class: 'col-actions' },
        el('button', { type: 'button', class: 'btn btn-sm', dataset: { action: 'edit' }, onclick: () => openGroup(g) }, t('common_edit')),
        ' ',
        el('button', { type: 'button', class: 'btn btn-sm btn-danger-outline', dataset: { action: 'delete' }, onclick: () => remove(g) }, t('common_delete'))));
  }

  function remove(g) {
    return confirmDelete(t('groups_delete_ask', g.title), '/jobgroup/delete', g.id, load);
  }

  const dlg = document.getElementById('dlg-group');
  const form = document.getElementById('form-group');
  let editing = null;

  function syncType() {
    const manual = form.querySelector('input[name="addressType"]:checked').value === '1';
    form.addressList.disabled = !manual;
    document.getElementById('group-auto-hint').hidden = manual;
  }

  // The 3.5 layout's form has the group's access token, and keeps the app name its
  // executors authenticate with once the group exists.
  const token = form.elements.namedItem('accessToken');

  function openGroup(g) {
    editing = g;
    form.reset();
    if (token) {
      form.appname.readOnly = !!g;
      document.getElementById('group-app-fixed').hidden = !g;
    }
    $('[data-slot="title"]', dlg).textContent = g ? t('groups_edit', g.id) : t('groups_new');
    form.elements.namedItem('id').value = g ? g.id : '';
    if (g) {
      form.appname.value = g.appname;
      form.title.value = g.title;
      form.querySelector('input[name="addressType"][value="' + (g.addressType === 1 ? 1 : 0) + '"]').checked = true;
      form.addressList.value = g.addressList || '';
      if (token) token.value = g.accessToken || '';
    }
    syncType();
    openDialog(dlg);
    (g && token ? form.title : form.appname).focus();
  }

  form.querySelectorAll('input[name="addressType"]').forEach((r) => r.addEventListener('change', syncType));

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const app = form.appname.value.trim();
    const title = form.title.value.trim();
    const type = form.querySelector('input[name="addressType"]:checked').value;
    const list = form.addressList.value.replace(/\s+/g, '');
    if (!/^[a-z][a-zA-Z0-9-]{3,63}$/.test(app)) { formError(form, t('groups_f_appname') + ': ' + t('groups_appname_rule')); form.appname.focus(); return; }
    if (!title) { formError(form, t('groups_f_title') + ': ' + t('common_required')); form.title.focus(); return; }
    if (token && !/^[a-z][a-z0-9_]{3,49}$/.test(token.value)) { formError(form, t('groups_f_token') + ': ' + t('groups_token_rule')); token.focus(); return; }
    if (type === '1' && !list) { formError(form, t('groups_f_addresses') + ': ' + t('common_required')); form.addressList.focus(); return; }
    const params = { appname: app, title, addressType: type, addressList: type === '1' ? list : '' };
    if (token) params.accessToken = token.value;
    if (editing) params.id = editing.id;
    await saveForm(form.querySelector('button[type="submit"]'), form, dlg, editing ? '/jobgroup/update' : '/jobgroup/insert', params, load);
  });

  document.getElementById('btn-new').addEventListener('click', () => openGroup(null));
  load();
})();
