// Users (administrators): paged list, add/edit with role and per-executor
// permissions, delete.
'use strict';

(() => {
  const { saveForm, listPage, t, el, $, $$, openDialog, formError, confirmDelete, badge, boot } = App;
  const groups = new Map((boot.groups || []).map((g) => [String(g.id), g]));
  const list = listPage({ endpoint: '/user/pageList', table: 'users-table', fields: { role: '-1', username: '' }, reloadOn: ['role'], row });
  const load = list.load;

  const permIds = (u) => String(u.permission || '').split(',').map((s) => s.trim()).filter(Boolean);

  function row(u) {
    const self = u.username === boot.user;
    const names = u.role === 1 ? [el('span', { class: 'muted' }, t('users_all_groups'))]
      : permIds(u).map((id) => el('span', { class: 'chip chip-static' }, groups.has(id) ? groups.get(id).title : '#' + id));
    return el('tr', { dataset: { id: u.id } },
      el('td', { class: 'col-id mono' }, String(u.id)),
      el('td', { class: 'strong' }, u.username, self ? el('span', { class: 'tag tag-self' }, t('users_self')) : null),
      el('td', {}, u.role === 1 ? badge(t('role_admin'), 'primary') : badge(t('role_normal'), 'muted')),
      el('td', { class: 'chips-cell' }, el('div', { class: 'chips-row' }, names.length ? names : el('span', { class: 'muted' }, '—'))),
      el('td', { class: 'col-actions' },
        el('button', { type: 'button', class: 'btn btn-sm', disabled: self, dataset: { action: 'edit' }, onclick: () => openUser(u) }, t('common_edit')),
        ' ',
        el('button', { type: 'button', class: 'btn btn-sm btn-danger-outline', disabled: self, dataset: { action: 'delete' }, onclick: () => remove(u) }, t('common_delete'))));
  }

  function remove(u) {
    return confirmDelete(t('users_delete_ask', u.username), '/user/delete', u.id, load);
  }

  const dlg = document.getElementById('dlg-user');
  const form = document.getElementById('form-user');
  let editing = null;

  function syncRole() {
    const admin = form.querySelector('input[name="role"]:checked').value === '1';
    document.getElementById('perm-field').hidden = admin;
    document.getElementById('perm-admin').hidden = !admin;
  }

  function openUser(u) {
    editing = u;
    form.reset();
    $('[data-slot="title"]', dlg).textContent = u ? t('users_edit', u.username) : t('users_new');
    form.elements.namedItem('id').value = u ? u.id : '';
    form.username.readOnly = !!u;
    form.password.placeholder = u ? t('users_f_pwd_keep') : '';
    document.getElementById('pwd-req').hidden = !!u;
    if (u) {
      form.username.value = u.username;
      form.querySelector('input[name="role"][value="' + (u.role === 1 ? 1 : 0) + '"]').checked = true;
      const ids = new Set(permIds(u));
      $$('input[name="permission"]', form).forEach((c) => { c.checked = ids.has(c.value); });
    }
    syncRole();
    openDialog(dlg);
    (u ? form.password : form.username).focus();
  }

  form.querySelectorAll('input[name="role"]').forEach((r) => r.addEventListener('change', syncRole));

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const name = form.username.value.trim();
    const pwd = form.password.value.trim();
    const role = form.querySelector('input[name="role"]:checked').value;
    if (!editing && !/^[a-z][a-z0-9]{3,19}$/.test(name)) { formError(form, t('users_f_name') + ': ' + t('users_name_rule')); form.username.focus(); return; }
    if ((!editing || pwd) && (pwd.length < 4 || pwd.length > 20)) { formError(form, t('users_f_password') + ': ' + t('pwd_rule')); form.password.focus(); return; }
    const params = { username: name, password: pwd, role };
    params.permission = role === '1' ? [] : $$('input[name="permission"]:checked', form).map((c) => c.value);
    if (editing) params.id = editing.id;
    await saveForm(form.querySelector('button[type="submit"]'), form, dlg, editing ? '/user/update' : '/user/insert', params, load);
  });

  document.getElementById('btn-new').addEventListener('click', () => openUser(null));
  load();
})();
