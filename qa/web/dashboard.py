#!/usr/bin/python3
"""qa/web/dashboard.py - drive web/index.html in headless Chromium.

Used by qa/151.  Opens the page from disk (file://), pointed at a real
pmproxy, and checks what it shows by reading the DOM (the page names its
elements by metric: data-metric, data-instance, data-raw, data-state).
Prints one line per check, "ok: ..." or "FAIL: ...", and saves a
screenshot of each state in --shots.  Debian's chromium and chromedriver,
driven by python3-selenium: nothing is downloaded.

Checks, in order (each waits up to --wait seconds for the page):
  running    every script of --running is listed as running
  rate       --rate (a counter) shows a rate above zero
  heatmap    --heatmap's canvas has painted cells (and pixels that are not
             the background)
  output     --output SCRIPT:TEXT: the script's log has a line with TEXT
  failed     --failed SCRIPT:PATTERN: its row says failed, with its
             compiler error (a regular expression) under it
  gone       --gone FILE:SCRIPT: FILE moved out of the autostart
             directory, the script's section says it is no longer
             served; moved back, it runs again and its metric shows
  restart    pmproxy stopped (--proxy-pid, --proxy-argv): the page says
             "unreachable"; started again, the page recovers by itself
  flame      --flame METRIC:F1,F2,... (repeatable): METRIC (an array keyed by stacks)
             is drawn as a flame graph with frames named F1, F2, ...; each
             frame's value is the sum of the values, fetched here through
             /pmapi/fetch, of the stacks through it, and its width is that
             over the sum of all (to 0.5% of the graph's width); a click
             on the narrowest zooms to it, one on the bottom bar out
  register   --register-bad FILE:PATTERN: FILE's text put in the
             registration form and submitted (stored through /pmapi/store):
             the outcome says refused, with the diagnostics (PATTERN, a
             regular expression); --register-good FILE:SCRIPT:METRIC: the
             outcome names SCRIPT, then says it runs and lists METRIC, and
             SCRIPT's section shows METRIC's value
  dead       pointed at --dead-url: the page says "unreachable"
  series     the series view (one metric across hosts, from pmproxy's
             series store) opened on --series METRIC: one line per host of
             --series-want HOST=VALUE,... with VALUE its newest sample;
             then --series-then CMD runs (more workload) and the page, by
             itself, reaches --series-want2; every sample and rate it drew
             is what /series/values gives for that host's series; then
             --series-hist METRIC (a .hist) chosen in the form: a heatmap
             per host, its rows the bucket names /series/instances gives
  no-series  --no-series METRIC chosen in the series view of a pmproxy
             with no series store (no Redis): the view says so
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync",
                  "--window-size=1400,2400"]


class Page:
    def __init__(self, args):
        self.args = args
        self.profile = tempfile.mkdtemp(prefix="qa-chromium-")
        opts = webdriver.ChromeOptions()
        opts.binary_location = args.chromium
        for f in CHROMIUM_FLAGS + ["--user-data-dir=" + self.profile]:
            opts.add_argument(f)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.drv = webdriver.Chrome(service=Service(args.chromedriver), options=opts)
        self.failures = 0
        self.shot_no = 0

    def close(self):
        try:
            self.drv.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

    def js(self, code, *a):
        return self.drv.execute_script(code, *a)

    def wait(self, code, *a, secs=None):
        """Poll CODE (a function body returning truthy) until it holds."""
        end = time.time() + (secs or self.args.wait)
        while True:
            try:
                got = self.js(code, *a)
            except Exception as e:  # a page between states
                got = None
                last = str(e)
            if got:
                return got
            if time.time() > end:
                return None
            time.sleep(0.2)

    def shot(self, name):
        self.shot_no += 1
        path = os.path.join(self.args.shots, "%d-%s.png" % (self.shot_no, name))
        height = self.js("return document.documentElement.scrollHeight") or 2400
        self.drv.set_window_size(1400, min(max(int(height) + 40, 800), 8000))
        self.drv.save_screenshot(path)

    def check(self, ok, what, why=""):
        if ok:
            print("ok: " + what)
        else:
            self.failures += 1
            print("FAIL: " + what + (": " + why if why else ""))
        sys.stdout.flush()

    def state(self):
        return self.js("const c = document.getElementById('conn');"
                       "return c ? c.dataset.state + ' | ' + c.textContent : 'no #conn'")

    def open(self, url, host=""):
        page = "file://" + os.path.abspath(self.args.page)
        q = urllib.parse.urlencode({"pmproxy": url, "host": host, "interval": 500,
                                    "series": self.args.series or ""})
        self.drv.get(page + "?" + q)

    def set_proxy(self, url):
        self.js("const f = document.getElementById('settings');"
                "f.pmproxy.value = arguments[0]; f.requestSubmit();", url)

    def js_errors(self):
        errs = []
        for e in self.drv.get_log("browser"):
            m = e.get("message", "")
            # fetches refused while pmproxy is down are what the page reports
            if e.get("level") == "SEVERE" and "net::ERR" not in m and "Failed to load resource" not in m:
                errs.append(m)
        return errs


ROW = "document.querySelector('#scripts-table tr.script-row[data-script=\"' + arguments[0] + '\"]')"


def check_running(p):
    names = p.args.running.split(",")
    ok = p.wait("return arguments[0].every(s => { const r = " + ROW.replace("arguments[0]", "s") +
                "; return r && r.dataset.status === 'running'; })", names)
    p.shot("running")
    p.check(ok, "the page lists %s as running" % ", ".join(names), p.state())


def check_rate(p):
    sel = ".panel[data-metric=\"%s\"] .value" % p.args.rate
    v = p.wait("const e = document.querySelector(arguments[0]);"
               "return e && parseFloat(e.dataset.raw) > 0 ? e.dataset.raw : null", sel)
    text = p.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : ''", sel)
    p.shot("rate")
    p.check(v and text.endswith("/s"), "%s shows a rate above zero" % p.args.rate,
            "value %r, text %r" % (v, text))


HEAT_PIXELS = """
const c = document.querySelector('canvas.heatmap[data-metric="' + arguments[0] + '"]');
if (!c || !(+c.dataset.painted > 0)) return null;
const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
let n = 0;
for (let i = 0; i < d.length; i += 4)
    if (!(d[i] === 244 && d[i + 1] === 244 && d[i + 2] === 244)) n++;
return n > 0 ? [+c.dataset.painted, +c.dataset.rows, n] : null;
"""


def check_heatmap(p):
    got = p.wait(HEAT_PIXELS, p.args.heatmap)
    p.shot("heatmap")
    p.check(got, "%s is drawn as a heatmap" % p.args.heatmap,
            "no painted cells" if not got else "")


def check_output(p):
    script, text = p.args.output.split(":", 1)
    code = ("return [...document.querySelectorAll('.log[data-instance=\"' + arguments[0] + '\"] .line')]"
            ".some(l => l.textContent.includes(arguments[1]))")
    ok = p.wait(code, script, text)
    first = p.js("const l = document.querySelector('.log[data-instance=\"' + arguments[0] + '\"] .line');"
                 "return l ? l.textContent : ''", script)
    p.shot("output")
    p.check(ok, "the %s log shows lines with %s" % (script, text), "newest line %r" % first)


def check_failed(p):
    script, pattern = p.args.failed.split(":", 1)
    code = ("const r = " + ROW + "; const e = document.querySelector('pre.error[data-instance=\"' + arguments[0] + '\"]');"
            "return r && r.dataset.status === 'failed' && e && !e.closest('tr').hidden ? e.textContent : null")
    err = p.wait(code, script)
    banner = p.js("const s = document.querySelector('section.script[data-script=\"' + arguments[0] + '\"] .banner');"
                  "return s && !s.hidden ? s.textContent : ''", script)
    p.shot("failed")
    p.check(err and re.search(pattern, err) and "failed" in banner,
            "%s is shown failed, with its error" % script, "error %r, banner %r" % (err, banner))


def check_gone(p):
    path, script = p.args.gone.split(":", 1)
    sec = "document.querySelector('section.script[data-script=\"' + arguments[0] + '\"]')"
    os.rename(path, path + ".off")
    gone = p.wait("const s = " + sec + "; return s && s.dataset.status === 'gone' ? "
                  "s.querySelector('.banner').textContent : null", script)
    p.shot("gone")
    p.check(gone and "no longer served" in gone, "%s's removal is shown" % script, repr(gone))
    os.rename(path + ".off", path)
    back = p.wait("const s = " + sec + "; return s && s.dataset.status === 'running' && "
                  "s.querySelector('.panel[data-metric]:not(.gone) .value[data-raw]:not([data-raw=\"\"])')",
                  script, secs=p.args.wait * 2)
    p.shot("back")
    p.check(back, "%s runs again and its values show" % script, p.state())


def proxy_stop(p):
    with open(p.args.proxy_pid) as f:
        pid = int(f.read())
    os.kill(pid, signal.SIGTERM)
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)


def proxy_start(p):
    with open(p.args.proxy_argv) as f:
        argv = f.read().splitlines()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    with open(p.args.proxy_pid, "w") as f:
        f.write(str(proc.pid))


def check_restart(p):
    proxy_stop(p)
    down = p.wait("const c = document.getElementById('conn');"
                  "return c.dataset.state === 'unreachable' && /unreachable/.test(c.textContent)")
    p.shot("pmproxy-stopped")
    p.check(down, "with pmproxy stopped, the page says unreachable", p.state())
    proxy_start(p)
    sel = ".panel[data-metric=\"%s\"] .value" % p.args.rate
    up = p.wait("const c = document.getElementById('conn'), e = document.querySelector(arguments[0]);"
                "return c.dataset.state === 'ok' && e && parseFloat(e.dataset.raw) > 0", sel)
    p.shot("pmproxy-back")
    p.check(up, "pmproxy started again, the page recovers by itself", p.state())


def rest(p, path):
    """PATH's JSON; asked again, for 20 s, while pmproxy is down: the tests run it
    under qa/pmda/supervise, which starts it again when it crashes (told in .full)"""
    end = time.time() + 20
    while True:
        try:
            with urllib.request.urlopen(p.args.pmproxy + path, timeout=20) as r:
                return json.load(r)
        except (OSError, http.client.HTTPException):
            if time.time() > end:
                raise
            time.sleep(0.5)


def rest_values(p, metric):
    """METRIC's values by instance name, in one REST context."""
    ctx = rest(p, "/pmapi/context")["context"]
    names = {i["instance"]: i["name"] for i in
             rest(p, "/pmapi/indom?context=%d&name=%s" % (ctx, metric))["instances"]}
    vals = rest(p, "/pmapi/fetch?context=%d&names=%s" % (ctx, metric))["values"]
    return {names[i["instance"]]: i["value"] for v in vals for i in v["instances"]}


def funcs(stack):
    return [re.sub(r"\+0x[0-9a-f]+$", "", f) for f in stack.split(";")]


FLAME_FRAMES = """
const f = document.querySelector('.flame[data-metric="' + arguments[0] + '"]');
if (!f || f.closest('[hidden]') || +f.dataset.total !== arguments[1]) return null;
const w = f.getBoundingClientRect().width;
return [...f.querySelectorAll('.frame')].map(e => [e.dataset.frame, e.dataset.path, +e.dataset.value,
    e.getBoundingClientRect().width / w, e.textContent]);
"""


def check_flame(p):
    for arg in p.args.flame:
        check_flame_of(p, arg)


def check_flame_of(p, arg):
    metric, wanted = arg.split(":", 1)
    wanted = wanted.split(",")
    vals = rest_values(p, metric)
    total = sum(vals.values())
    frames = p.wait(FLAME_FRAMES, metric, total)
    p.js("const f = document.querySelector('.flame[data-metric=\"' + arguments[0] + '\"]');"
         "if (f) f.scrollIntoView()", metric)
    p.shot("flame")
    if not frames:
        p.check(False, "%s is drawn as a flame graph" % metric, "no graph with total %d" % total)
        return
    bad = []
    for name in wanted:
        mine = [f for f in frames if f[0] == name]
        if not mine:
            bad.append("no frame %s" % name)
        for _, path, value, share, text in mine:
            want = sum(v for s, v in vals.items() if funcs(s)[:len(path.split(";"))] == path.split(";"))
            if value != want or abs(share - want / total) > 0.005 or text != name:
                bad.append("%s: value %s, width %.4f, text %r; over REST %d of %d (%.4f)" %
                           (path, value, share, text, want, total, want / total))
    print("flame frames: " + ", ".join(sorted("%s=%d" % (f[0], f[2]) for f in frames if f[0] in wanted)))
    p.check(not bad, "%s is a flame graph: %s named, as wide as their counts over REST" %
            (metric, ", ".join(wanted)), "; ".join(bad))
    # a click on the narrowest wanted frame shows only what is above it, full width
    # (the page redraws in the click's handler: the DOM is new when click() returns)
    name, path, _, _, _ = min((f for f in frames if f[0] in wanted), key=lambda f: f[3])
    click = ("const f = document.querySelector('.flame[data-metric=\"' + arguments[0] + '\"]');"
             "[...f.querySelectorAll('.frame')].find(e => e.dataset.path === arguments[1]).click();")
    any_total = FLAME_FRAMES.replace("+f.dataset.total !== arguments[1]", "false")
    p.js(click, metric, path)
    zoomed = p.js(any_total, metric, total) or []
    full = [f for f in zoomed if f[1] == path and abs(f[3] - 1) < 0.005]
    others = [f[1] for f in zoomed if not (path.startswith(f[1]) or f[1].startswith(path))]
    p.shot("flame-zoomed")
    p.js(click, metric, "")
    back = p.js(any_total, metric, total) or []
    p.check(full and not others and len(back) == len(frames),
            "a click on %s zooms to it, one on the bottom bar zooms out" % name,
            "zoomed %r, others %r, %d frames back of %d" % (full, others, len(back), len(frames)))


# the registration's outcome, [state, script, text], when its state is arguments[0]
OUTCOME = ("const o = document.getElementById('register-outcome');"
           "return o && !o.hidden && o.dataset.state === arguments[0] ?"
           " [o.dataset.state, o.dataset.script, o.textContent] : null")


def register(p, path):
    with open(path) as f:
        text = f.read()
    ok = p.wait("return document.getElementById('register').dataset.enabled === 'true'")
    p.js("const d = document.getElementById('register'); d.open = true; d.scrollIntoView();"
         "const t = document.getElementById('register-script'); t.value = arguments[0];"
         "document.getElementById('register-form').requestSubmit();", text)
    return ok


def check_register(p):
    if p.args.register_bad:
        path, pattern = p.args.register_bad.split(":", 1)
        enabled = register(p, path)
        got = p.wait(OUTCOME, "refused")
        p.shot("register-refused")
        p.check(enabled and got and re.search(pattern, got[2]),
                "a script with a mistake, registered in the form, is refused with its diagnostics",
                "enabled %r, outcome %r" % (enabled, got))
    if p.args.register_good:
        path, script, metric = p.args.register_good.split(":", 2)
        register(p, path)
        named = p.wait("const o = document.getElementById('register-outcome');"
                       "return o.dataset.script === arguments[0] ? o.textContent : null", script)
        running = p.wait("const o = document.getElementById('register-outcome');"
                         "return o.dataset.state === 'running' && o.dataset.script === arguments[0] &&"
                         " [...o.querySelectorAll('a.metric')].some(a => a.textContent === arguments[1]) ? o.textContent : null",
                         script, metric, secs=p.args.wait * 3)
        value = p.wait("const s = document.querySelector('section.script[data-script=\"' + arguments[0] + '\"]');"
                       "const v = s && s.querySelector('.panel[data-metric=\"' + arguments[1] + '\"] .value[data-raw]:not([data-raw=\"\"])');"
                       "return v ? v.dataset.raw : null", script, metric)
        p.js("document.getElementById('register').scrollIntoView()")
        p.shot("register-running")
        p.check(named and running and value is not None,
                "a good script registered in the form runs, and its metric %s shows" % metric,
                "named %r, outcome %r, value %r" % (named, running, value))


def check_dead(p):
    p.set_proxy(p.args.dead_url)
    ok = p.wait("const c = document.getElementById('conn');"
                "return c.dataset.state === 'unreachable' && c.textContent.includes('unreachable') ? c.textContent : null")
    p.shot("dead-port")
    p.check(ok, "pointed at a dead port, the page says unreachable", p.state())


SERIES_ROWS = """
return [...document.querySelectorAll('#series-legend tbody tr')].map(r =>
    [r.dataset.host, r.dataset.instance, r.dataset.value, r.dataset.series]);
"""


def series_want(p, spec):
    """Wait for one legend row per host of SPEC (HOST=VALUE,...), each with its VALUE."""
    want = sorted(tuple(x.split("=", 1)) for x in spec.split(","))
    got = p.wait("const rows = (function () {" + SERIES_ROWS + "})();"
                 "return JSON.stringify(rows.map(r => [r[0], r[2]]).sort()) === arguments[0] ? rows : null",
                 json.dumps([list(w) for w in want], separators=(",", ":")))
    last = p.js(SERIES_ROWS)
    return got, want, last


def series_rest(p, sid):
    """SID's samples [[t ms, value]] over the last 10 minutes, from /series/values."""
    vals = rest(p, "/series/values?series=%s&start=-600sec" % sid)
    return sorted((float(v["timestamp"]), float(v["value"])) for v in vals if not v.get("instance"))


def series_match(p, desc):
    """Every sample the page drew, and every rate, is /series/values' own."""
    lines = p.js("return Stap.seriesView.lines.map(l => ({ host: l.host, series: l.series,"
                 " counter: l.counter, samples: l.samples, points: l.points }))")
    bad = []
    for ln in lines:
        mine = [(float(t), float(v)) for t, v in ln["samples"]]
        rest_s = [s for s in series_rest(p, ln["series"]) if mine and mine[0][0] <= s[0] <= mine[-1][0]]
        if mine != rest_s:
            bad.append("%s: %d samples drawn, %d over REST in the same time" % (ln["host"], len(mine), len(rest_s)))
            continue
        want = [(t1, (v1 - v0) * 1000 / (t1 - t0) if t1 > t0 and v1 >= v0 else None)
                for (t0, v0), (t1, v1) in zip(rest_s, rest_s[1:])] if ln["counter"] else rest_s
        got = [(float(t), None if v is None else float(v)) for t, v in ln["points"]]
        if len(got) != len(want) or any(a[0] != b[0] or (a[1] is None) != (b[1] is None) or
                                        (a[1] is not None and abs(a[1] - b[1]) > 1e-9 * max(1, abs(b[1])))
                                        for a, b in zip(got, want)):
            bad.append("%s: drawn %r, from REST %r" % (ln["host"], got[-3:], want[-3:]))
    hosts = sorted(ln["host"] for ln in lines)
    p.check(lines and not bad, "%s: what the page drew is what /series/values gives (%s)" %
            (desc, ", ".join(hosts)), "; ".join(bad))


def check_series(p):
    metric = p.args.series
    got, want, last = series_want(p, p.args.series_want)
    drawn = p.js("return document.getElementById('series-chart').dataset.lines")
    # the help the live part knows, on hover (helpText: name, help, then type and units)
    helped = p.wait("const t = document.getElementById('series-chart').title;"
                    "return t.startsWith(arguments[0] + '\\n') && / units /.test(t) ? t : null", metric)
    p.js("document.getElementById('series').scrollIntoView()")
    p.shot("series")
    p.check(got and drawn == str(len(want)) and helped,
            "%s: one line per host, newest values %s, its help on hover" %
            (metric, ", ".join("=".join(w) for w in want)), "rows %r, lines %r, help %r, note %r" %
            (last, drawn, helped, p.js("return document.getElementById('series-note').textContent")))
    if p.args.series_then:
        subprocess.run(p.args.series_then, shell=True, check=True)
        got, want, last = series_want(p, p.args.series_want2)
        p.js("document.getElementById('series').scrollIntoView()")
        p.shot("series-live")
        p.check(got, "%s: the page follows by itself: %s" % (metric, ", ".join("=".join(w) for w in want)),
                "rows %r" % (last,))
    series_match(p, metric)
    if p.args.series_hist:
        check_series_hist(p, p.args.series_hist, [w[0] for w in want])


HEATS = """
return [...document.querySelectorAll('#series-heat canvas.heatmap')].filter(c =>
    c.dataset.metric === arguments[0] && +c.dataset.painted > 0).map(c => [c.dataset.host, c.dataset.rows]);
"""


def check_series_hist(p, metric, hosts):
    p.js("const f = document.getElementById('series-form'); f.metric.value = arguments[0]; f.requestSubmit();",
         metric)
    got = p.wait("const h = (function () {" + HEATS + "})(arguments[0]);"
                 "return h.length === arguments[1] ? h : null", metric, len(hosts))
    p.js("document.getElementById('series').scrollIntoView()")
    p.shot("series-heatmap")
    bad = []
    for host in hosts:
        expr = urllib.parse.quote('%s{hostname=="%s"}' % (metric, host))
        sids = rest(p, "/series/query?expr=" + expr)
        names = sorted({i["name"] for i in rest(p, "/series/instances?series=" + ",".join(sids))},
                       key=lambda n: float(re.match(r"-?(\d+|inf)", n).group(0)))
        rows = dict(got or []).get(host)
        if rows != " ".join(names):
            bad.append("%s: rows %r, over REST %r" % (host, rows, names))
    p.check(got and not bad, "%s: a heatmap per host (%s), a row per bucket" % (metric, ", ".join(hosts)),
            "; ".join(bad) or "heatmaps %r" % (got,))


def check_no_series(p):
    p.js("const f = document.getElementById('series-form'); f.metric.value = arguments[0]; f.requestSubmit();",
         p.args.no_series)
    note = p.wait("const n = document.getElementById('series-note');"
                  "return n.dataset.state === 'error' ? n.textContent : null", secs=p.args.wait + 15)
    p.js("document.getElementById('series').scrollIntoView()")
    p.shot("no-series-store")
    p.check(note and "no series store" in note, "the series view of a pmproxy without Redis says it has no series store",
            repr(note))
    p.js("const f = document.getElementById('series-form'); f.metric.value = ''; f.requestSubmit();")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--page", required=True)
    ap.add_argument("--pmproxy", required=True)
    ap.add_argument("--shots", required=True)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    ap.add_argument("--wait", type=float, default=30)
    ap.add_argument("--running")
    ap.add_argument("--rate")
    ap.add_argument("--heatmap")
    ap.add_argument("--output")
    ap.add_argument("--failed")
    ap.add_argument("--gone")
    ap.add_argument("--proxy-pid")
    ap.add_argument("--proxy-argv")
    ap.add_argument("--dead-url")
    ap.add_argument("--flame", action="append")
    ap.add_argument("--host", default="")
    ap.add_argument("--register-bad")
    ap.add_argument("--register-good")
    ap.add_argument("--series")
    ap.add_argument("--series-want")
    ap.add_argument("--series-then")
    ap.add_argument("--series-want2")
    ap.add_argument("--series-hist")
    ap.add_argument("--no-series")
    args = ap.parse_args()
    os.makedirs(args.shots, exist_ok=True)
    p = Page(args)
    try:
        p.open(args.pmproxy, args.host)
        for name, check in [("running", check_running), ("rate", check_rate),
                            ("heatmap", check_heatmap), ("output", check_output),
                            ("failed", check_failed), ("flame", check_flame),
                            ("register_bad", check_register), ("no_series", check_no_series),
                            ("gone", check_gone),
                            ("proxy_pid", check_restart), ("dead_url", check_dead),
                            ("series", check_series)]:
            if getattr(args, name):
                check(p)
        errs = p.js_errors()
        p.check(not errs, "no JavaScript errors", "; ".join(errs))
    finally:
        p.close()
    return 1 if p.failures else 0


if __name__ == "__main__":
    sys.exit(main())
