#!/usr/bin/env python3
"""Opens an HTTPLogging run's index.html in headless Chromium and checks the page.

Talks to Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages
ending in NUL on file descriptors 3 and 4), so nothing but the Python standard library is needed.

  viewer_check.py --chromium /usr/bin/chromium --run RUN_FOLDER --screenshot out.png
      checks the showcase run that HTTPLoggingTests writes (rows, bars, filters, the detail pane,
      that no script from the data ran), a 0-fetch page and a page with broken and unfinished data,
      and saves a screenshot.
  viewer_check.py --chromium /usr/bin/chromium --measure INDEX_HTML
      prints how long the page takes to open (one RESULT line), for Benchmarks/run.sh.
"""
import argparse
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, chromium, width=1440, height=860):
        self.width, self.height = width, height
        self.profile = tempfile.mkdtemp(prefix="viewer-check-profile-")
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def child_fds():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.process = subprocess.Popen(
            [chromium, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--allow-file-access-from-files",
             "--user-data-dir=" + self.profile, "--hide-scrollbars", "about:blank"],
            # 3 and 4 are kept too: descriptors not listed are closed after child_fds has run.
            pass_fds=tuple(sorted({to_chrome_r, from_chrome_w, 3, 4})), preexec_fn=child_fds,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Runtime.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=True)

    def read_message(self, timeout):
        deadline = time.time() + timeout
        while b"\0" not in self.buffer:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.from_chrome], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self.from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=False, timeout=30):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            answer = self.read_message(timeout)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_event(self, name, timeout=30):
        deadline = time.time() + timeout
        while True:
            for index, event in enumerate(self.events):
                if event.get("method") == name:
                    del self.events[index]
                    return event
            self.events.append(self.read_message(max(0.1, deadline - time.time())))

    def open(self, url, timeout=60):
        self.events = []
        began = time.time()
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_event("Page.loadEventFired", timeout)
        while self.js("document.documentElement.getAttribute('data-ready')") != "true":
            if time.time() - began > timeout:
                raise TimeoutError("the page never became ready")
            time.sleep(0.02)
        return time.time() - began

    def js(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


failures = []


def check(name, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + name + (f" ({detail})" if detail and not condition else ""))
    if not condition:
        failures.append(name)


# Helpers the checks run in the page.
PAGE_HELPERS = r"""
window.__rows = () => Array.from(document.querySelectorAll('#rows .row'));
window.__rowNamed = (text) => __rows().find(r => r.querySelector('.c-name').textContent.includes(text));
window.__click = (el) => { el.dispatchEvent(new MouseEvent('click', {bubbles: true})); };
window.__filter = (text) => { const q = document.getElementById('q'); q.value = text;
  q.dispatchEvent(new Event('input', {bubbles: true})); };
window.__tab = (name) => __click(document.querySelector('#tabs [data-tab="' + name + '"]'));
window.__settle = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
"""


def check_showcase(browser, run, screenshot):
    index = os.path.join(run, "index.html")
    url = "file://" + os.path.abspath(index)
    browser.open(url)
    browser.js(PAGE_HELPERS)
    fetches = int(browser.js("document.documentElement.getAttribute('data-fetches')"))
    with open(os.path.join(run, "log.har"), encoding="utf-8") as file:
        har_fetches = {entry.get("_fetch") for entry in json.load(file)["log"]["entries"]}
    check("one row per fetch of log.har", fetches == len(har_fetches) and fetches >= 10, f"{fetches} rows")
    check("rows are drawn", browser.js("__rows().length") == fetches)
    check("no script from the data ran", browser.js("typeof window.pwned") == "undefined")
    check("attempt bars on every row", browser.js("__rows().every(r => r.querySelector('.seg-bar'))"))
    check("a throttle wait is drawn", browser.js("document.querySelectorAll('#rows .ph-throttle').length") >= 1)
    check("a retry delay is drawn", browser.js("document.querySelectorAll('#rows .ph-retry').length") >= 1)
    check("the time axis has ticks", browser.js("document.querySelectorAll('#wfhead .tick').length") >= 3)
    check("status colours: a 5xx bar and a 4xx bar",
          browser.js("!!document.querySelector('#rows .seg-bar.s5') && !!document.querySelector('#rows .seg-bar.s4')"))
    check("a failed fetch is marked", browser.js("__rows().some(r => r.classList.contains('err'))"))
    check("the comment is the row's name", browser.js("!!__rowNamed('Follow two redirects')"))

    # Filters: text, status class, host.
    browser.js("__filter('two redirects')")
    names = browser.js("__rows().map(r => r.querySelector('.c-name').textContent)")
    check("text filter by comment", len(names) == 1 and "Follow two redirects" in names[0], str(names))
    browser.js("__filter('x-note')")  # a request header's name, only on the hostile fetch
    names = browser.js("__rows().map(r => r.querySelector('.c-name').textContent)")
    check("text filter by header", len(names) == 1 and "Hostile" in names[0], str(names))
    browser.js("__filter('')")
    browser.js("__click(document.querySelector('#statusFilter [data-s=\"5\"]'))")
    statuses = browser.js("__rows().map(r => r.querySelector('.c-status').textContent)")
    check("status filter 5xx", statuses == ["500"], str(statuses))
    browser.js("__click(document.querySelector('#statusFilter [data-s=\"f\"]'))")
    statuses = browser.js("__rows().map(r => r.querySelector('.c-status').textContent)")
    check("status filter failed", len(statuses) >= 2 and "200" not in statuses, str(statuses))
    browser.js("__click(document.querySelector('#statusFilter [data-s=\"all\"]'))")
    check("host filter lists the host", browser.js("document.querySelectorAll('#host option').length") >= 2)
    browser.js("const h = document.getElementById('host'); h.selectedIndex = 1; h.dispatchEvent(new Event('change'))")
    check("host filter keeps the host's rows", browser.js("__rows().length") == fetches)

    # Retries and redirects grouped under their fetch.
    browser.js("__click(__rowNamed('Retried after').querySelector('.caret'))")
    check("a fetch expands into its attempts",
          browser.js("document.querySelectorAll('#rows .row.child').length") == 2)

    # Sizes in the units they are counted in (1,024 bytes to the KiB).
    sizes = browser.js("__rows().map(r => r.querySelector('.c-size').textContent)")
    check("sizes are in KiB and MiB", any("KiB" in t for t in sizes)
          and not any(" kB" in t or " MB" in t for t in sizes), str(sizes))
    upload = browser.js("__rowNamed('Upload of 256 KiB').querySelector('.c-size').textContent")
    check("an upload shows the bytes it sent", upload.startswith("↑ 256.0 KiB"), upload)
    check("an upload's bar has its sending phase",
          browser.js("!!__rowNamed('Upload of 256 KiB').querySelector('.seg-bar i.send')"))
    download = browser.js("__rowNamed('Download in windows')")
    if download is not None:
        status = browser.js("__rowNamed('Download in windows').querySelector('.c-status').textContent")
        size = browser.js("__rowNamed('Download in windows').querySelector('.c-size').textContent")
        check("a download in Range windows shows the caller's status", status == "200", status)
        check("a download in Range windows counts every window's bytes", size == "2.0 MiB", size)

    # Each failed attempt carries its own error.
    browser.js("__click(__rowNamed('Retried after lost connections').querySelector('.caret'))")
    failed = browser.js("Array.from(document.querySelectorAll('#rows .row.child.err')).filter(r =>"
                        " r.querySelector('.c-name').textContent.includes('/empty?retried')"
                        " && r.querySelector('.badge.fail')).length")
    check("each failed attempt is marked with its error", failed == 3, f"{failed} marked")
    browser.js("__click(__rowNamed('Retried after lost connections').querySelector('.caret'))")

    # Bars stay inside the waterfall panel at every width.
    for width in (720, 1024, browser.width):
        browser.call("Emulation.setDeviceMetricsOverride",
                     {"width": width, "height": browser.height, "deviceScaleFactor": 1, "mobile": False},
                     session=True)
        browser.js("window.dispatchEvent(new Event('resize')); __settle()")
        outside = browser.js(
            "Array.from(document.querySelectorAll('#rows .c-wf > *')).filter(b => {"
            " const c = b.parentElement.getBoundingClientRect(), r = b.getBoundingClientRect();"
            " return r.left < c.left - 1 || r.right > c.right + 1; }).length")
        check(f"bars stay inside the panel at {width} px", outside == 0, f"{outside} outside")
    # The last size set is the browser's own: the screenshot below is taken at it.

    # The detail pane.
    browser.js("__click(__rowNamed('Hostile body'))")
    check("clicking a row opens the detail pane", browser.js("!document.getElementById('detail').hidden"))
    check("the detail shows the comment as text",
          browser.js("document.getElementById('d-name').textContent").endswith("Hostile body </script>"))
    check("request headers are listed",
          browser.js("document.getElementById('d-body').textContent.includes('\"quoted\" ünïcode <tag>')"))
    browser.js("__tab('response')")
    body = browser.js("document.querySelector('#d-body pre.body').textContent")
    check("a hostile body is shown as text", "</script><script>window.pwned=1</script>" in body, body[:80])
    check("still no script from the data ran", browser.js("typeof window.pwned") == "undefined")

    browser.js("__click(__rowNamed('Sign in'))")
    browser.js("__tab('payload')")
    payload = browser.js("document.querySelector('#d-body pre.body').textContent")
    check("a JSON request body is pretty-printed", '\n  "' in payload, payload[:80])
    check("the password is redacted as in the text logs", "hunter2" not in payload and "_snip_" in payload)
    browser.js("__tab('headers')")
    check("the Authorization header is redacted",
          browser.js("document.getElementById('d-body').textContent.includes('Bearer _snip_')")
          and not browser.js("document.getElementById('d-body').textContent.includes('abc.def.ghi')"))

    browser.js("__click(__rowNamed('Avatar image'))")
    browser.js("__tab('response')")
    browser.js("new Promise(r => { const i = document.querySelector('#d-body img'); if (!i || i.complete) r(); else i.onload = i.onerror = r; })")
    check("an image body is shown", browser.js("(document.querySelector('#d-body img.preview') || {}).naturalWidth") == 32)

    browser.js("__click(__rowNamed('Tiny image'))")
    browser.js("__tab('response')")
    browser.js("new Promise(r => { const i = document.querySelector('#d-body img'); if (!i || i.complete) r(); else i.onload = i.onerror = r; })")
    check("a short image body is shown from the HAR's base64",
          browser.js("(() => { const i = document.querySelector('#d-body img.preview');"
                     " return !!i && i.naturalWidth === 1 && i.src.startsWith('data:image/png;base64,'); })()") is True)

    browser.js("__click(__rowNamed('Page 1'))")
    browser.js("__tab('timing')")
    check("the timing tab shows the throttle wait",
          browser.js("document.getElementById('d-body').textContent.includes('Waiting for a throttle slot')"))

    browser.js("__click(__rowNamed('Stopped while waiting'))")
    check("a stopped fetch says so", browser.js("__rowNamed('Stopped while waiting').querySelector('.c-status').textContent") == "stopped")

    # The picture for the docs: the whole run, the retried fetch expanded, a request's headers open.
    browser.js("__click(__rowNamed('Sign in'))")
    browser.js("__tab('headers')")
    browser.js("__settle()")
    browser.screenshot(screenshot)
    check("screenshot saved", os.path.getsize(screenshot) > 10000, screenshot)


def check_bad_pages(browser, run):
    with open(os.path.join(run, "index.html"), encoding="utf-8") as file:
        page = file.read()
    head = page[: page.index('<script type="application/json"')]
    folder = tempfile.mkdtemp(prefix="viewer-check-pages-")
    try:
        empty = os.path.join(folder, "empty.html")
        with open(empty, "w", encoding="utf-8") as file:
            file.write(head)
        browser.open("file://" + empty)
        check("a 0-fetch run renders", browser.js("document.documentElement.getAttribute('data-fetches')") == "0")
        check("a 0-fetch run says so",
              "No fetches" in browser.js("document.getElementById('empty').textContent")
              and not browser.js("document.getElementById('empty').hidden"))

        broken = os.path.join(folder, "broken.html")
        never = {"_fetch": 2, "_kind": "first", "startedDateTime": "2026-11-25T05:00:00.100Z",
                 "_startedTime": 1795496400100, "time": -1,
                 "request": {"method": "GET", "url": "https://example.com/never-ended?q=\"x\"&ü=1", "headers": []}}
        done = {"_fetch": 1, "_kind": "first", "startedDateTime": "2026-11-25T05:00:00.000Z", "time": 50,
                "request": {"method": "GET", "url": "https://example.com/done"},
                "response": {"status": 200, "content": {"size": 5, "text": "hello"}},
                "timings": {"send": 0, "wait": 40, "receive": 10}}
        with open(broken, "w", encoding="utf-8") as file:
            file.write(head)
            for entries in ([done], [never]):
                file.write('<script type="application/json" class="har-entries">'
                           + json.dumps(entries).replace("<", "\\u003c") + "</script>\n")
            file.write('<script type="application/json" class="har-entries">[{"_fetch":3,"request":{')
        browser.open("file://" + broken)
        check("unreadable data is skipped, the rest shown",
              browser.js("document.documentElement.getAttribute('data-fetches')") == "2")
        check("unreadable data is reported", "1 unreadable" in browser.js("document.getElementById('footer').textContent"))
        check("a fetch that never ended shows as pending",
              browser.js("Array.from(document.querySelectorAll('#rows .c-status')).map(e => e.textContent).includes('pending')"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chromium", required=True)
    parser.add_argument("--run")
    parser.add_argument("--screenshot")
    parser.add_argument("--measure")
    options = parser.parse_args()
    # A window the showcase run fills: the picture in the docs.
    browser = Browser(options.chromium, width=1360, height=600)
    try:
        if options.measure:
            seconds = browser.open("file://" + os.path.abspath(options.measure), timeout=120)
            fetches = browser.js("document.documentElement.getAttribute('data-fetches')")
            script_ms = browser.js("document.documentElement.getAttribute('data-render-ms')")
            print(f"RESULT fetches={fetches} open_s={seconds:.3f} script_ms={script_ms} "
                  f"bytes={os.path.getsize(options.measure)}")
            return 0
        check_showcase(browser, options.run, options.screenshot)
        check_bad_pages(browser, options.run)
    finally:
        browser.close()
    if failures:
        print(f"viewer check: {len(failures)} failed: {', '.join(failures)}")
        return 1
    print("viewer check: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
