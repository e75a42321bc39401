// Sign-in page: posts the form to the 3.x sign-in endpoint and goes to the console.
'use strict';

(() => {
  const { t, api, boot, busy } = App;
  const form = document.getElementById('login-form');
  const err = document.getElementById('login-error');
  const submit = document.getElementById('login-submit');
  // Only an identity provider's button when local and LDAP passwords are off.
  if (!form) return;

  function show(msg) {
    err.textContent = msg;
    err.hidden = !msg;
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const user = form.userName.value.trim();
    const pwd = form.password.value;
    if (user.length < 4) { show(t('login_need_user')); form.userName.focus(); return; }
    if (pwd.trim().length < 4) { show(t('login_need_pwd')); form.password.focus(); return; }
    show('');
    submit.textContent = t('login_busy');
    await busy(submit, async () => {
      try {
        await api('/auth/doLogin', { userName: user, password: pwd, ifRemember: form.ifRemember.checked ? 'on' : undefined });
        window.location.assign(boot.home || (boot.base + '/'));
      } catch (x) {
        show(x.message || t('login_failed'));
        submit.textContent = t('login_submit');
        form.password.select();
      }
    });
  });
})();
