extension ViewerPage {
  /// The page's script. It reads the HAR entries embedded in the page (`script.har-entries`
  /// elements, JSON), groups them into fetches by `_fetch`, and draws a virtualised waterfall.
  /// Nothing from the data is ever parsed as HTML: every text goes in through `textContent`, and the
  /// only URLs it sets are the run folder's own file names.
  static let script = #"""
    (function () {
      'use strict';
      var RH = 24, OVERSCAN = 10;
      var fetches = [], view = [], hosts = {}, expanded = {}, badBlocks = 0;
      var state = { q: '', status: 'all', host: '', sel: -1, ex: -1, tab: 'headers' };
      var t0 = 0, span = 1, scroller, body, rowsBox, frame = 0;

      function $(id) { return document.getElementById(id); }
      function el(tag, cls, text) {
        var e = document.createElement(tag);
        if (cls) e.className = cls;
        if (text !== undefined && text !== null) e.textContent = String(text);
        return e;
      }
      function num(v, d) { return typeof v === 'number' && isFinite(v) ? v : d; }
      function ms(v) {
        if (!(v >= 0)) return '–';
        if (v < 1) return v.toFixed(2) + ' ms';
        if (v < 1000) return (v < 10 ? v.toFixed(1) : Math.round(v)) + ' ms';
        return (v / 1000).toFixed(v < 10000 ? 2 : 1) + ' s';
      }
      function bytes(v) {
        if (!(v >= 0)) return '–';
        if (v < 1024) return v + ' B';
        if (v < 1048576) return (v / 1024).toFixed(1) + ' KiB';
        if (v < 1073741824) return (v / 1048576).toFixed(1) + ' MiB';
        return (v / 1073741824).toFixed(2) + ' GiB';
      }
      function str(v) { return typeof v === 'string' ? v : ''; }
      function arr(v) { return Array.isArray(v) ? v : []; }
      function obj(v) { return v && typeof v === 'object' && !Array.isArray(v) ? v : {}; }
      // Only the run folder's own files (fetch_3.txt, fetch_3_response.png) become links.
      function safeFile(name) { return typeof name === 'string' && /^fetch_[A-Za-z0-9_.-]+$/.test(name) ? name : null; }

      function readEntries() {
        var nodes = document.querySelectorAll('script.har-entries'), texts = [], i;
        for (i = 0; i < nodes.length; i++) texts.push(nodes[i].textContent);
        try {
          return [].concat.apply([], JSON.parse('[' + texts.join(',') + ']').map(arr));
        } catch (e) {
          var all = [];
          for (i = 0; i < texts.length; i++) {
            try { all = all.concat(arr(JSON.parse(texts[i]))); } catch (e2) { badBlocks++; }
          }
          return all;
        }
      }

      function statusClass(status, failed) {
        if (status >= 200 && status < 600) return String(Math.floor(status / 100));
        if (status >= 100 && status < 200) return '2';
        return failed || !status ? 'f' : '2';
      }

      function build(entries) {
        var byNumber = {}, order = [], i;
        for (i = 0; i < entries.length; i++) {
          var e = obj(entries[i]), n = typeof e._fetch === 'number' ? e._fetch : -1 - i;
          if (!byNumber[n]) { byNumber[n] = []; order.push(n); }
          byNumber[n].push(e);
        }
        for (i = 0; i < order.length; i++) fetches.push(makeFetch(order[i], byNumber[order[i]]));
        fetches.sort(function (a, b) { return a.start - b.start || a.n - b.n; });
        for (i = 0; i < fetches.length; i++) {
          fetches[i].index = i;
          hosts[fetches[i].host] = (hosts[fetches[i].host] || 0) + 1;
        }
      }

      function makeFetch(n, entries) {
        var summary = null, ex = [], i;
        for (i = 0; i < entries.length; i++) {
          var e = entries[i], req = obj(e.request), res = obj(e.response), t = obj(e.timings);
          if (e._fetchSummary) summary = obj(e._fetchSummary);
          var start = num(e._startedTime, Date.parse(str(e.startedDateTime)));
          ex.push({ entry: e, req: req, res: res, t: t, kind: str(e._kind) || 'first', start: num(start, 0),
            time: num(e.time, -1), status: num(res.status, 0), error: str(e._error),
            size: num(obj(res.content).size, -1), sent: num(req.bodySize, -1),
            retryDelay: num(e._retryDelay, -1) });
        }
        var first = ex[0], last = ex[ex.length - 1];
        summary = summary || {};
        var start = num(summary.startedTime, first.start);
        var time = num(summary.time, -1);
        if (!(time >= 0)) {
          time = -1;
          for (i = 0; i < ex.length; i++) if (ex[i].time >= 0) time = Math.max(time, ex[i].start + ex[i].time - start);
        }
        var pending = !(num(summary.time, -1) >= 0) && !last.error && !(last.status > 0 && last.time >= 0);
        var url = str(last.req.url) || str(first.req.url), host = '(no host)', path = url;
        try { var u = new URL(url); host = u.host || u.protocol; path = u.pathname + u.search; } catch (err) {}
        var seg = path.split('?')[0].split('/').filter(Boolean).pop() || path || url;
        var query = path.indexOf('?') >= 0 ? path.slice(path.indexOf('?')) : '';
        var error = str(summary.error) || last.error;
        var comment = str(first.entry.comment);
        var f = { n: n, ex: ex, start: start, time: time, end: time >= 0 ? start + time : NaN, pending: pending,
          comment: comment, url: url, host: host, name: comment || (seg + query) || url || '(no URL)',
          method: str(last.req.method) || str(first.req.method) || 'GET',
          // The status the caller got: not the last Range window's 206.
          status: num(summary.status, last.status),
          error: error, cancelled: summary.cancelled === true, throttled: num(summary.throttled, num(first.t.blocked, 0)),
          log: safeFile(summary.log), size: total(ex, 'size'), sent: total(ex, 'sent'), search: null };
        f.sc = pending ? 'f' : statusClass(f.status, !!error);
        f.retries = ex.filter(function (x) { return x.kind === 'retry'; }).length;
        f.redirects = ex.filter(function (x) { return x.kind === 'redirect'; }).length;
        return f;
      }

      // Bytes over every exchange of a fetch (its windows, redirects and failed attempts), or -1.
      function total(ex, key) {
        var sum = -1;
        ex.forEach(function (x) { if (x[key] > 0) sum = Math.max(sum, 0) + x[key]; else if (x[key] === 0 && sum < 0) sum = 0; });
        return sum;
      }
      function sizeText(received, sent) {
        return sent > 0 ? '↑ ' + bytes(sent) + ' ↓ ' + bytes(received) : bytes(received);
      }

      function searchText(f) {
        if (f.search === null) {
          var parts = [f.url, f.comment, f.method, String(f.status), f.error];
          f.ex.forEach(function (x) {
            parts.push(str(x.req.url));
            arr(x.req.headers).concat(arr(x.res.headers)).forEach(function (h) {
              h = obj(h); parts.push(str(h.name) + ': ' + str(h.value));
            });
          });
          f.search = parts.join('\n').toLowerCase();
        }
        return f.search;
      }

      function matches(f) {
        if (state.status !== 'all' && f.sc !== state.status) return false;
        if (state.host && f.host !== state.host) return false;
        if (state.q && searchText(f).indexOf(state.q.toLowerCase()) < 0) return false;
        return true;
      }

      function filter() {
        view = [];
        var lo = Infinity, hi = -Infinity, count = 0, size = 0, errors = 0;
        for (var i = 0; i < fetches.length; i++) {
          var f = fetches[i];
          if (!matches(f)) continue;
          count++;
          if (f.size > 0) size += f.size;
          if (f.sc === 'f' || f.sc === '4' || f.sc === '5') errors++;
          lo = Math.min(lo, f.start);
          hi = Math.max(hi, f.end >= 0 ? f.end : f.start);
          for (var j = 0; j < f.ex.length; j++) hi = Math.max(hi, f.ex[j].start + Math.max(0, f.ex[j].time));
          view.push({ f: f, x: -1 });
          if (expanded[f.n] && f.ex.length > 1) for (j = 0; j < f.ex.length; j++) view.push({ f: f, x: j });
        }
        t0 = isFinite(lo) ? lo : 0;
        span = Math.max(isFinite(hi) ? hi - t0 : 1, 1);
        var foot = $('footer');
        foot.textContent = '';
        var parts = [[count + ' / ' + fetches.length, ' fetches'], [bytes(size), ' received'],
          [ms(span), ' span'], [String(errors), ' failed or 4xx/5xx']];
        if (badBlocks) parts.push([String(badBlocks), ' unreadable data blocks']);
        parts.forEach(function (p) { var s = el('span'); s.appendChild(el('b', '', p[0])); s.appendChild(document.createTextNode(p[1])); foot.appendChild(s); });
        drawTicks();
        body.style.height = (view.length * RH) + 'px';
        $('empty').hidden = view.length > 0;
        $('empty').textContent = fetches.length ? 'No fetch matches the filter.' : 'No fetches were logged in this run yet.';
        render();
      }

      // About one tick per 90 pixels of the waterfall column.
      function niceStep(range) {
        var width = $('wfhead').clientWidth || 400;
        var raw = range / Math.max(2, Math.floor(width / 90)), p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
        return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
      }
      function drawTicks() {
        var head = $('wfhead'), step = niceStep(span);
        head.textContent = '';
        for (var t = 0; t <= span; t += step) {
          var tick = el('div', 'tick', t === 0 ? '0' : ms(t));
          tick.style.left = (t / span * 100) + '%';
          head.appendChild(tick);
        }
        scroller.style.setProperty('--tick', (step / span * 100) + '%');
      }
      function pct(t) { return ((t - t0) / span * 100); }
      // Inside the panel at every width: a bar never starts before 0 % nor ends past 100 %.
      function place(e, from, to) {
        var left = Math.min(100, Math.max(0, pct(from))), right = Math.min(100, Math.max(left, pct(to)));
        e.style.left = left + '%';
        e.style.width = (right - left) + '%';
        return e;
      }

      // The phases of one exchange as [class, milliseconds], from the HAR timings.
      function phases(x) {
        var t = x.t, list = [];
        if (t.dns >= 0) list.push(['dns', t.dns]);
        if (t.connect >= 0) list.push(['connect', t.connect - Math.max(0, num(t.ssl, 0))]);
        if (t.ssl >= 0) list.push(['tls', t.ssl]);
        if (t.send > 0) list.push(['send', t.send]);
        list.push(['wait', Math.max(0, num(t.wait, 0))]);
        list.push(['recv', Math.max(0, num(t.receive, 0))]);
        return list;
      }
      function attemptBar(x, sc) {
        var bar = el('div', 'seg-bar s' + sc), end = x.start + Math.max(0, x.time);
        place(bar, x.start, end);
        var total = 0, list = phases(x);
        list.forEach(function (p) { total += p[1]; });
        list.forEach(function (p) {
          if (p[1] <= 0) return;
          var i = el('i', p[0]); i.style.flex = (total > 0 ? p[1] / total : 0) + ' 0 0'; bar.appendChild(i);
        });
        if (!bar.firstChild) { var i = el('i', 'recv'); i.style.flex = '1 0 0'; bar.appendChild(i); }
        bar.title = x.req.method + ' ' + (x.status || 'no response') + ' · ' + ms(x.time);
        return bar;
      }
      function waterfall(cell, f, only) {
        if (only >= 0) {
          var x = f.ex[only];
          if (only > 0 && x.kind === 'retry') cell.appendChild(place(el('div', 'ph-retry'), f.ex[only - 1].start + Math.max(0, f.ex[only - 1].time), x.start));
          cell.appendChild(attemptBar(x, x === f.ex[f.ex.length - 1] ? f.sc : statusClass(x.status, !!x.error)));
          return;
        }
        if (f.throttled > 0) cell.appendChild(place(el('div', 'ph-throttle'), f.start, f.start + f.throttled));
        var firstSend = f.ex[0].start;
        if (f.ex[0].kind !== 'none' && firstSend > f.start + f.throttled) cell.appendChild(place(el('div', 'ph-queue'), f.start + f.throttled, firstSend));
        for (var i = 0; i < f.ex.length; i++) {
          var x = f.ex[i];
          if (i > 0) {
            var prevEnd = f.ex[i - 1].start + Math.max(0, f.ex[i - 1].time);
            if (x.start > prevEnd) cell.appendChild(place(el('div', x.kind === 'retry' ? 'ph-retry' : 'ph-gap'), prevEnd, x.start));
          }
          if (x.kind === 'none') continue;
          if (f.pending && i === f.ex.length - 1) { cell.appendChild(place(el('div', 'ph-pending'), x.start, t0 + span)); continue; }
          cell.appendChild(attemptBar(x, i === f.ex.length - 1 ? f.sc : statusClass(x.status, !!x.error)));
        }
      }

      function kindLabel(f, i) {
        var x = f.ex[i], retries = 0;
        for (var j = 0; j <= i; j++) if (f.ex[j].kind === 'retry') retries++;
        if (x.kind === 'retry') return 'Retry ' + retries;
        if (x.kind === 'redirect') return 'Redirect';
        if (x.kind === 'continuation') return 'Continued';
        return f.retries ? 'Attempt 1' : 'Request';
      }
      function shortURL(url) {
        try { var u = new URL(url); return u.pathname + u.search; } catch (e) { return url; }
      }

      function statusText(f, x) {
        if (x) return x.status ? String(x.status) : (x.error ? 'failed' : '–');
        if (f.pending) return 'pending';
        if (f.cancelled) return 'stopped';
        return f.status ? String(f.status) : 'failed';
      }

      function makeRow(item, i) {
        var f = item.f, x = item.x >= 0 ? f.ex[item.x] : null;
        var row = el('div', 'row grid' + (x ? ' child' : '') + (f.sc === 'f' || (f.error && !x) || (x && x.error) ? ' err' : '') +
          (f.index === state.sel && (x ? item.x === state.ex : state.ex < 0 || !expanded[f.n]) ? ' sel' : ''));
        row.style.top = (i * RH) + 'px';
        row.setAttribute('data-fetch', String(f.index));
        row.setAttribute('data-exchange', String(item.x));
        row.appendChild(el('div', 'c-num', x ? '' : f.n >= 0 ? f.n : ''));
        var name = el('div', 'c-name');
        if (x) {
          name.textContent = kindLabel(f, item.x) + ' · ' + shortURL(str(x.req.url));
          // A failed attempt says why, beside its own bytes.
          if (x.error) name.appendChild(el('span', 'badge fail', x.error));
        } else {
          if (f.ex.length > 1) { var caret = el('span', 'caret', expanded[f.n] ? '▾' : '▸'); caret.setAttribute('data-toggle', '1'); name.appendChild(caret); }
          name.appendChild(document.createTextNode(f.name));
          if (f.retries) name.appendChild(el('span', 'badge retry', '↻ ' + f.retries));
          if (f.redirects) name.appendChild(el('span', 'badge', '→ ' + f.redirects));
          if (f.throttled > 0) name.appendChild(el('span', 'badge', 'throttled'));
        }
        name.title = x ? str(x.req.url) + (x.error ? '\n' + x.error : '') : f.url + (f.comment ? '\n' + f.comment : '') + (f.error ? '\n' + f.error : '');
        row.appendChild(name);
        row.appendChild(el('div', 'c-method', x ? str(x.req.method) : f.method));
        var sc = x ? statusClass(x.status, !!x.error) : f.sc;
        row.appendChild(el('div', 'c-status st-' + sc, statusText(f, x)));
        row.appendChild(el('div', 'c-host', f.host));
        row.appendChild(el('div', 'c-size', x ? sizeText(x.size, x.sent) : sizeText(f.size, f.sent)));
        row.appendChild(el('div', 'c-time', f.pending && !x ? 'pending' : ms(x ? x.time : f.time)));
        var cell = el('div', 'c-wf');
        waterfall(cell, f, item.x);
        row.appendChild(cell);
        return row;
      }

      function render() {
        frame = 0;
        var top = scroller.scrollTop, height = scroller.clientHeight || 600;
        var first = Math.max(0, Math.floor(top / RH) - OVERSCAN);
        var last = Math.min(view.length, Math.ceil((top + height) / RH) + OVERSCAN);
        var frag = document.createDocumentFragment();
        for (var i = first; i < last; i++) frag.appendChild(makeRow(view[i], i));
        rowsBox.textContent = '';
        rowsBox.appendChild(frag);
      }
      function schedule() { if (!frame) frame = requestAnimationFrame(render); }

      // --- Detail pane ---
      function kv(table, key, value, cls) {
        var tr = el('tr'); tr.appendChild(el('td', '', key)); tr.appendChild(el('td', cls || '', value)); table.appendChild(tr);
      }
      function headerTable(list) {
        var t = el('table', 'kv');
        arr(list).forEach(function (h) { h = obj(h); kv(t, str(h.name), str(h.value)); });
        if (!t.firstChild) return el('div', 'note', 'none');
        return t;
      }
      function fileLink(name, label) {
        var a = el('a', '', label || name); a.href = name; a.target = '_blank'; a.rel = 'noopener'; return a;
      }
      function bodyView(box, text, mime, size, file, comment, encoding) {
        mime = (mime || '').toLowerCase();
        // A short binary body is in the HAR as base64 instead of a file of its own.
        var b64 = encoding === 'base64' && typeof text === 'string' && /^[A-Za-z0-9+\/]*={0,2}$/.test(text) ? text : null;
        // SVG is text: it is shown as text, never loaded as an image (its file is .svg.txt).
        if (/^image\//.test(mime) && !/xml|svg/.test(mime) && (file || (b64 && /^image\/[a-z0-9.+-]+$/.test(mime)))) {
          var img = el('img', 'preview'); img.alt = 'response image';
          img.src = file || 'data:' + mime + ';base64,' + b64; box.appendChild(img);
          box.appendChild(el('div', 'note', bytes(size) + ' · ' + mime));
        } else if (b64 !== null) {
          var raw = atob(b64), hex = '';
          for (var i = 0; i < raw.length; i++) hex += (i % 16 ? ' ' : (i ? '\n' : '')) + ('0' + raw.charCodeAt(i).toString(16)).slice(-2);
          box.appendChild(el('div', 'note', bytes(size) + (mime ? ' · ' + mime : '') + ' · binary'));
          box.appendChild(el('pre', 'body', hex));
        } else if (typeof text === 'string' && text.length) {
          var shown = text;
          if (/json/.test(mime) || /^\s*[\[{]/.test(text)) {
            try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch (e) {}
          }
          box.appendChild(el('pre', 'body', shown));
        } else if (size > 0) {
          box.appendChild(el('div', 'note', bytes(size) + (mime ? ' · ' + mime : '') + (comment ? ' · ' + comment : '')));
        } else {
          box.appendChild(el('div', 'note', 'No body.'));
        }
        if (comment && typeof text === 'string' && text.length && b64 === null) box.appendChild(el('div', 'note', comment));
        if (file) { var p = el('div', 'note'); p.appendChild(document.createTextNode('Saved as ')); p.appendChild(fileLink(file)); box.appendChild(p); }
      }
      function timingRow(table, label, cls, from, len, total) {
        var tr = el('tr');
        tr.appendChild(el('td', '', label));
        var cell = el('td', 'bar'), i = el('i', cls);
        i.style.left = (from / total * 100) + '%'; i.style.width = (len / total * 100) + '%';
        cell.appendChild(i); tr.appendChild(cell);
        tr.appendChild(el('td', 'ms', ms(len)));
        table.appendChild(tr);
      }

      function showDetail() {
        var pane = $('detail');
        var f = fetches[state.sel];
        var wasOpen = !pane.hidden;
        document.body.classList.toggle('detail-open', !!f);
        pane.hidden = !f;
        if (wasOpen !== !!f) drawTicks();  // the waterfall column changed width
        if (!f) return;
        var xi = state.ex >= 0 && state.ex < f.ex.length ? state.ex : f.ex.length - 1, x = f.ex[xi];
        $('d-name').textContent = (f.n >= 0 ? '#' + f.n + '  ' : '') + f.name;
        $('d-url').textContent = x.req.method + ' ' + str(x.req.url);
        var chips = $('chips'); chips.textContent = '';
        if (f.ex.length > 1) f.ex.forEach(function (e, i) {
          var c = el('button', 'chip' + (i === xi ? ' on' : ''), kindLabel(f, i) + ' · ' + (e.status || 'failed'));
          c.setAttribute('data-ex', String(i)); chips.appendChild(c);
        });
        var tabs = $('tabs').children;
        for (var i = 0; i < tabs.length; i++) tabs[i].classList.toggle('on', tabs[i].getAttribute('data-tab') === state.tab);
        var box = $('d-body'); box.textContent = ''; box.scrollTop = 0;
        var content = obj(x.res.content), post = obj(x.req.postData);
        if (state.tab === 'headers') {
          box.appendChild(el('h3', '', 'General'));
          var g = el('table', 'kv');
          kv(g, 'Request URL', str(x.req.url));
          kv(g, 'Method', str(x.req.method));
          kv(g, 'Status', x.status ? x.status + ' ' + str(x.res.statusText) : 'no response');
          if (x.kind !== 'first') kv(g, 'Kind', x.kind);
          if (str(x.res.redirectURL)) kv(g, 'Redirects to', str(x.res.redirectURL));
          if (x.retryDelay >= 0) kv(g, 'Retried after', ms(x.retryDelay));
          if (str(x.entry.serverIPAddress)) kv(g, 'Remote address', str(x.entry.serverIPAddress));
          kv(g, 'Protocol', str(x.res.httpVersion) || str(x.req.httpVersion));
          if (f.comment) kv(g, 'Comment', f.comment);
          if (x.error || (xi === f.ex.length - 1 && f.error)) kv(g, 'Error', x.error || f.error, 'err-text');
          box.appendChild(g);
          if (f.log) { var p = el('div', 'note'); p.appendChild(document.createTextNode('Text log: ')); p.appendChild(fileLink(f.log)); box.appendChild(p); }
          box.appendChild(el('h3', '', 'Response headers (' + arr(x.res.headers).length + ')'));
          box.appendChild(headerTable(x.res.headers));
          box.appendChild(el('h3', '', 'Request headers (' + arr(x.req.headers).length + ')'));
          box.appendChild(headerTable(x.req.headers));
        } else if (state.tab === 'payload') {
          if (arr(x.req.queryString).length) { box.appendChild(el('h3', '', 'Query string')); box.appendChild(headerTable(x.req.queryString)); }
          box.appendChild(el('h3', '', 'Request body'));
          if (x.req.postData) bodyView(box, post.text, post.mimeType, num(x.req.bodySize, 0), safeFile(post._file), str(post.comment));
          else box.appendChild(el('div', 'note', 'No body.'));
        } else if (state.tab === 'response') {
          bodyView(box, content.text, content.mimeType, num(content.size, 0), safeFile(content._file), str(content.comment), content.encoding);
        } else if (state.tab === 'cookies') {
          box.appendChild(el('h3', '', 'Request cookies'));
          box.appendChild(headerTable(x.req.cookies));
          box.appendChild(el('h3', '', 'Response cookies'));
          var t = el('table', 'kv');
          arr(x.res.cookies).forEach(function (c) {
            c = obj(c);
            var attrs = [str(c.value)];
            if (c.path) attrs.push('Path=' + str(c.path));
            if (c.domain) attrs.push('Domain=' + str(c.domain));
            if (c.expires) attrs.push('Expires=' + str(c.expires));
            if (c.httpOnly) attrs.push('HttpOnly');
            if (c.secure) attrs.push('Secure');
            kv(t, str(c.name), attrs.join('; '));
          });
          box.appendChild(t.firstChild ? t : el('div', 'note', 'none'));
        } else {
          var total = Math.max(f.time, 0.001), tt = el('table', 'timing');
          box.appendChild(el('h3', '', 'Fetch'));
          if (f.throttled > 0) timingRow(tt, 'Waiting for a throttle slot', 'ph-throttle', 0, f.throttled, total);
          f.ex.forEach(function (e, i) {
            if (i > 0) {
              var prevEnd = f.ex[i - 1].start + Math.max(0, f.ex[i - 1].time);
              if (e.start > prevEnd) timingRow(tt, e.kind === 'retry' ? 'Retry delay' : 'Between hops', e.kind === 'retry' ? 'ph-retry' : 'ph-gap', prevEnd - f.start, e.start - prevEnd, total);
            }
            if (e.kind === 'none') return;
            var wrap = el('tbody', 's' + statusClass(e.status, !!e.error));
            timingRow(wrap, (i + 1) + '. ' + e.req.method + ' ' + (e.status || 'failed') + (e.kind === 'first' ? '' : ' (' + e.kind + ')'), 'recv', e.start - f.start, Math.max(0, e.time), total);
            tt.appendChild(wrap);
          });
          box.appendChild(tt);
          box.appendChild(el('div', 'note', 'Total ' + ms(f.time) + (f.retries ? ' · ' + f.retries + ' retries' : '') + (f.redirects ? ' · ' + f.redirects + ' redirects' : '')));
          box.appendChild(el('h3', '', 'Exchange ' + (xi + 1) + ' phases'));
          var pt = el('table', 'timing'), at = 0, sum = 0, list = phases(x);
          list.forEach(function (p) { sum += p[1]; });
          var labels = { dns: 'DNS lookup', connect: 'Connecting', tls: 'TLS handshake', send: 'Request sent', wait: 'Waiting for the server (TTFB)', recv: 'Content download' };
          list.forEach(function (p) {
            var wrap = el('tbody', 's' + statusClass(x.status, !!x.error)); timingRow(wrap, labels[p[0]], p[0], at, p[1], Math.max(sum, 0.001)); at += p[1]; pt.appendChild(wrap);
          });
          box.appendChild(pt);
          if (!(x.t.dns >= 0) && !(x.t.connect >= 0)) box.appendChild(el('div', 'note', 'DNS, connect and TLS phases are measured on the libcurl engine.'));
        }
      }

      // --- State, events ---
      function select(index, ex, keep) {
        state.sel = index; state.ex = ex;
        showDetail(); render(); saveHash();
        if (!keep) return;
        for (var i = 0; i < view.length; i++) {
          if (view[i].f.index === index && (view[i].x === ex || (ex < 0 && view[i].x < 0))) {
            var top = i * RH;
            if (top < scroller.scrollTop + RH || top > scroller.scrollTop + scroller.clientHeight - 2 * RH) scroller.scrollTop = top - scroller.clientHeight / 3;
            break;
          }
        }
      }
      function saveHash() {
        var p = [];
        if (state.q) p.push('q=' + encodeURIComponent(state.q));
        if (state.status !== 'all') p.push('status=' + state.status);
        if (state.host) p.push('host=' + encodeURIComponent(state.host));
        if (state.sel >= 0) p.push('fetch=' + fetches[state.sel].n);
        if (state.sel >= 0 && state.tab !== 'headers') p.push('tab=' + state.tab);
        try { history.replaceState(null, '', p.length ? '#' + p.join('&') : location.pathname + location.search); } catch (e) {}
      }
      function readHash() {
        var h = location.hash.slice(1).split('&');
        h.forEach(function (pair) {
          var k = pair.split('=')[0], v = pair.slice(k.length + 1);
          try { v = decodeURIComponent(v.replace(/\+/g, ' ')); } catch (e) { return; }
          if (k === 'q') state.q = v;
          if (k === 'status' && /^(all|2|3|4|5|f)$/.test(v)) state.status = v;
          if (k === 'host') state.host = v;
          if (k === 'tab' && /^(headers|payload|response|cookies|timing)$/.test(v)) state.tab = v;
          if (k === 'fetch') {
            for (var i = 0; i < fetches.length; i++) if (String(fetches[i].n) === v) state.sel = i;
          }
          if (k === 'expand') {
            for (var j = 0; j < fetches.length; j++) if (String(fetches[j].n) === v) expanded[fetches[j].n] = true;
          }
        });
      }

      function start() {
        var began = performance.now();
        scroller = $('scroller'); body = $('body'); rowsBox = $('rows');
        build(readEntries());
        readHash();
        var hostSelect = $('host');
        Object.keys(hosts).sort().forEach(function (h) {
          var o = el('option', '', h + ' (' + hosts[h] + ')'); o.value = h; hostSelect.appendChild(o);
        });
        if (!hosts[state.host]) state.host = '';
        hostSelect.value = state.host;
        $('q').value = state.q;
        var buttons = $('statusFilter').children;
        function markStatus() { for (var i = 0; i < buttons.length; i++) buttons[i].classList.toggle('on', buttons[i].getAttribute('data-s') === state.status); }
        markStatus();
        filter();
        showDetail();
        if (state.sel >= 0) select(state.sel, -1, true);

        $('q').addEventListener('input', function () { state.q = this.value; filter(); saveHash(); });
        hostSelect.addEventListener('change', function () { state.host = this.value; filter(); saveHash(); });
        $('statusFilter').addEventListener('click', function (ev) {
          var s = ev.target.getAttribute && ev.target.getAttribute('data-s');
          if (!s) return;
          state.status = s; markStatus(); filter(); saveHash();
        });
        scroller.addEventListener('scroll', schedule);
        window.addEventListener('resize', function () { drawTicks(); schedule(); });
        rowsBox.addEventListener('click', function (ev) {
          var row = ev.target.closest ? ev.target.closest('.row') : null;
          if (!row) return;
          var index = +row.getAttribute('data-fetch'), ex = +row.getAttribute('data-exchange'), f = fetches[index];
          if (ev.target.getAttribute('data-toggle')) { expanded[f.n] = !expanded[f.n]; filter(); return; }
          select(index, ex, false);
        });
        $('chips').addEventListener('click', function (ev) {
          var i = ev.target.getAttribute && ev.target.getAttribute('data-ex');
          if (i === null || i === undefined) return;
          state.ex = +i; showDetail(); render();
        });
        $('tabs').addEventListener('click', function (ev) {
          var t = ev.target.getAttribute && ev.target.getAttribute('data-tab');
          if (!t) return;
          state.tab = t; showDetail(); saveHash();
        });
        $('close').addEventListener('click', function () { select(-1, -1, false); });
        document.addEventListener('keydown', function (ev) {
          if (ev.target === $('q')) { if (ev.key === 'Escape') { $('q').blur(); } return; }
          if (ev.key === '/') { ev.preventDefault(); $('q').focus(); return; }
          if (ev.key === 'Escape') { select(-1, -1, false); return; }
          if (ev.key !== 'ArrowDown' && ev.key !== 'ArrowUp') return;
          ev.preventDefault();
          var at = -1;
          for (var i = 0; i < view.length; i++) if (view[i].x < 0 && view[i].f.index === state.sel) at = i;
          var step = ev.key === 'ArrowDown' ? 1 : -1;
          for (var j = at + step; j >= 0 && j < view.length; j += step) if (view[j].x < 0) { select(view[j].f.index, -1, true); break; }
        });
        document.documentElement.setAttribute('data-fetches', String(fetches.length));
        document.documentElement.setAttribute('data-render-ms', (performance.now() - began).toFixed(1));
        document.documentElement.setAttribute('data-ready', 'true');
      }
      document.addEventListener('DOMContentLoaded', start);
    })();
    """#
}
