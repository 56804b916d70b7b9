// pair.js: exchange the pairing code for a token (POST /api/pair), kept in localStorage.
'use strict';
ZC.ready(function () {
  const f = ZC.$('pair-form'), out = ZC.$('pair-result');
  if (ZC.token()) { out.textContent = 'This browser is already paired (device ' + ZC.device() + '). Pairing again replaces its token.'; }
  f.addEventListener('submit', async function (ev) {
    ev.preventDefault();
    out.textContent = 'Pairing…';
    try {
      const r = await ZC.api('POST', '/api/pair', { code: ZC.$('pair-code').value.trim(),
        device_name: ZC.$('pair-name').value.trim() || 'browser', device_type: 'browser' });
      ZC.setToken(r.token, r.device_id);
      ZC.$('pair-code').value = '';
      document.documentElement.dataset.auth = 'paired';
      out.textContent = '';
      ZC.append(out, ['Paired as device ', ZC.el('code', { id: 'pair-device' }, r.device_id), '. ',
        ZC.el('a', { href: ZC.prefix + '/ui/chat' }, 'Open the chat'), '.']);
    } catch (e) {
      out.textContent = 'Pairing failed: ' + e.message;
    }
  });
}, { public: true });
