// md.js: Markdown to DOM nodes, for hostile text (a model's answer). Only what is built here reaches the page:
// text nodes and a fixed set of elements (p, h1-h6, ul, ol, li, pre, code, strong, em, blockquote, a, hr).
// Raw HTML stays text; a link is kept only when its URL is http or https, and opens with rel=noopener.
'use strict';
window.ZCMarkdown = (function () {
  function safeURL(u) {
    try {
      const url = new URL(u, 'http://invalid.invalid/');
      if ((url.protocol === 'http:' || url.protocol === 'https:') && /^https?:\/\//i.test(u.trim())) return url.href;
    } catch (e) { /* not a URL */ }
    return null;
  }

  // inline renders one line's spans into parent: `code`, **strong**, *em*, [text](url).
  function inline(parent, s, depth) {
    depth = depth || 0;
    const re = /(`+)([^`]+?)\1|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[([^\]]{1,500})\]\(([^)\s]{1,2000})\)/;
    while (s.length) {
      const m = depth < 4 ? re.exec(s) : null;
      if (!m) { parent.appendChild(document.createTextNode(s)); return; }
      if (m.index) parent.appendChild(document.createTextNode(s.slice(0, m.index)));
      if (m[2] !== undefined) { const c = document.createElement('code'); c.textContent = m[2]; parent.appendChild(c); }
      else if (m[3] !== undefined) { const b = document.createElement('strong'); inline(b, m[3], depth + 1); parent.appendChild(b); }
      else if (m[4] !== undefined) { const e = document.createElement('em'); inline(e, m[4], depth + 1); parent.appendChild(e); }
      else {
        const href = safeURL(m[6]);
        if (href) {
          const a = document.createElement('a');
          a.href = href; a.rel = 'noopener noreferrer nofollow'; a.target = '_blank';
          inline(a, m[5], depth + 1); parent.appendChild(a);
        } else {
          parent.appendChild(document.createTextNode(m[0]));
        }
      }
      s = s.slice(m.index + m[0].length);
    }
  }

  // render returns a fragment of md's blocks.
  function render(md, depth) {
    depth = depth || 0;
    const frag = document.createDocumentFragment();
    const lines = String(md).replace(/\r\n?/g, '\n').split('\n');
    let i = 0, para = [];
    const flush = () => {
      if (!para.length) return;
      const p = document.createElement('p');
      para.forEach((l, k) => { if (k) p.appendChild(document.createElement('br')); inline(p, l); });
      frag.appendChild(p); para = [];
    };
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if ((m = /^\s*(```|~~~)\s*([\w+-]*)\s*$/.exec(line))) {
        flush();
        const fence = m[1], body = [];
        for (i++; i < lines.length && !lines[i].trim().startsWith(fence); i++) body.push(lines[i]);
        i++;
        const pre = document.createElement('pre'), code = document.createElement('code');
        if (m[2]) code.dataset.lang = m[2];
        code.textContent = body.join('\n'); pre.appendChild(code); frag.appendChild(pre);
        continue;
      }
      if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
        flush();
        const h = document.createElement('h' + Math.min(6, m[1].length + 2));
        inline(h, m[2]); frag.appendChild(h); i++; continue;
      }
      if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) { flush(); frag.appendChild(document.createElement('hr')); i++; continue; }
      if (depth < 8 && /^\s*>/.test(line)) {
        flush();
        const q = document.createElement('blockquote'), body = [];
        for (; i < lines.length && /^\s*>/.test(lines[i]); i++) body.push(lines[i].replace(/^\s*>\s?/, ''));
        q.appendChild(render(body.join('\n'), depth + 1)); frag.appendChild(q); continue;
      }
      if ((m = /^\s*([-*+]|\d{1,9}[.)])\s+/.exec(line))) {
        flush();
        const ordered = /\d/.test(m[1]);
        const list = document.createElement(ordered ? 'ol' : 'ul');
        for (; i < lines.length; i++) {
          const lm = /^\s*([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(lines[i]);
          if (!lm || /\d/.test(lm[1]) !== ordered) break;
          const li = document.createElement('li'); inline(li, lm[2]); list.appendChild(li);
        }
        frag.appendChild(list); continue;
      }
      if (!line.trim()) { flush(); i++; continue; }
      para.push(line); i++;
    }
    flush();
    return frag;
  }

  return { render, safeURL };
})();
