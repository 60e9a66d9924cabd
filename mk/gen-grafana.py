#!/usr/bin/python3
"""mk/gen-grafana.py BUILD - the grafana-pcp dashboard of the default scripts.

Writes on stdout web/grafana/pcp-stap.json: a Grafana dashboard for the
PCP Vector datasource of grafana-pcp (live values from pmproxy), a row per
default script of metrics/ (its .meta says "default: yes"), a panel per
exported global, each drawn as its metadata says it should be read:

    a counter (long)              time series (Vector plots it as a rate)
    an instant (long)             time series
    an array (long[...])          table of its instances, and time series
    a statistic                   its rate (.count), its avg/min/max, and
                                  with a histogram a heatmap of .hist (its
                                  instances are "lo-hi" buckets, the form
                                  grafana-pcp's heatmap reads)

and a first row of the scripts themselves (stap.scripts.*).  What each
script exports comes from its compiled metadata (BUILD/bin/pmstap -p4 and
BUILD/bin/metrics_meta -v), so nothing here is written per script: make
grafana-dashboard regenerates the file, qa/174 checks it.
"""
import json, os, subprocess, sys

UNITS = {  # (units, semantics) -> Grafana unit; Vector shows counters per second
    ("count", "counter"): "ops", ("bytes", "counter"): "Bps", ("nsec", "counter"): "ns",
    ("count", "instant"): "short", ("bytes", "instant"): "bytes", ("nsec", "instant"): "ns",
    ("count", "discrete"): "short", ("bytes", "discrete"): "bytes", ("nsec", "discrete"): "ns",
}
DS = {"type": "performancecopilot-vector-datasource", "uid": "${datasource}"}


def exports(build, script):
    """metrics_meta -v's lines of SCRIPT: [name, units, semantics, type, extra...]."""
    pmstap = os.path.join(build, "bin", "pmstap")
    out = subprocess.run([pmstap, "-p4", script], capture_output=True, text=True, check=True)
    so = [l for l in out.stdout.splitlines() if l.endswith("/script.so")][-1]
    meta = subprocess.run([os.path.join(build, "bin", "metrics_meta"), "-v", so],
                          capture_output=True, text=True, check=True)
    return [l.split() for l in meta.stdout.splitlines() if l.strip()]


class Layout:
    """Panels two to a row of the grid, 12 wide and 8 high."""
    def __init__(self):
        self.panels, self.y, self.x, self.id = [], 0, 0, 0

    def add(self, panel, width=12):
        if self.x + width > 24:
            self.x, self.y = 0, self.y + 8
        self.id += 1
        panel.update(id=self.id, datasource=DS,
                     gridPos={"x": self.x, "y": self.y, "w": width, "h": 8})
        self.panels.append(panel)
        self.x += width

    def row(self, title):
        if self.x:
            self.x, self.y = 0, self.y + 8
        self.id += 1
        self.panels.append({"id": self.id, "type": "row", "title": title, "collapsed": False,
                            "gridPos": {"x": 0, "y": self.y, "w": 24, "h": 1}, "panels": []})
        self.y += 1


def panel(kind, title, targets, unit=None, description=None):
    p = {"type": kind, "title": title,
         "targets": [{"refId": chr(ord("A") + i), "expr": e, "format": f,
                      **({"legendFormat": "$instance"} if f == "time_series" else {})}
                     for i, (e, f) in enumerate(targets)]}
    if unit:
        p["fieldConfig"] = {"defaults": {"unit": unit}, "overrides": []}
    if description:
        p["description"] = description
    return p


def script_rows(layout, name, lines):
    layout.row(f"stap.{name}")
    stats = {}
    for l in lines:
        metric, units, sem, typ = l[:4]
        unit = UNITS.get((units, sem))
        if typ == "stats":
            base, field = metric.rsplit(".", 1)
            stats.setdefault(base, {})[field] = (units, sem, "hist=" in " ".join(l[4:]))
            continue
        short = metric.split(".", 2)[2]
        if "[" in typ:
            layout.add(panel("timeseries", short, [(metric, "time_series")], unit))
            layout.add(panel("table", f"{short} (now)", [(metric, "table")], unit))
        else:
            layout.add(panel("timeseries", short, [(metric, "time_series")], unit))
    for base, fields in stats.items():
        short = base.split(".", 2)[2]
        units = fields["avg"][0]
        layout.add(panel("timeseries", f"{short}: per second", [(base + ".count",
                                                                 "time_series")], "ops"))
        layout.add(panel("timeseries", f"{short}: avg, min, max",
                         [(base + "." + f, "time_series") for f in ("avg", "min", "max")],
                         UNITS.get((units, "instant"))))
        if fields["hist"][2]:
            layout.add(panel("heatmap", f"{short}: histogram ({units})",
                             [(base + ".hist", "heatmap")]), 24)


def main():
    build = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    mdir = os.path.join(here, "..", "metrics")
    layout = Layout()
    layout.row("scripts")
    layout.add(panel("table", "status", [("stap.scripts.status", "table"),
                                         ("stap.scripts.uptime", "table"),
                                         ("stap.scripts.errors", "table"),
                                         ("stap.scripts.skipped", "table"),
                                         ("stap.scripts.dropped", "table")]), 24)
    for meta in sorted(f for f in os.listdir(mdir) if f.endswith(".meta")):
        text = open(os.path.join(mdir, meta)).read().splitlines()
        if "default: yes" not in text:
            continue
        name = meta[:-5]
        script_rows(layout, name, exports(build, os.path.join(mdir, name + ".stp")))
    dash = {
        "title": "pcp-stap: SystemTap scripts as PCP metrics",
        "uid": "pcp-stap",
        "tags": ["pcp-stap", "pcp-vector"],
        "description": "Generated by mk/gen-grafana.py from the default scripts of metrics/",
        "schemaVersion": 36, "editable": True, "refresh": "5s",
        "time": {"from": "now-15m", "to": "now"},
        "templating": {"list": [{"name": "datasource", "type": "datasource",
                                 "query": "performancecopilot-vector-datasource",
                                 "label": "PCP Vector", "hide": 0}]},
        "panels": layout.panels,
    }
    json.dump(dash, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
