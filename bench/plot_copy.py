"""Draw bench_copy.py's JSON as an SVG bar chart, or print it as Markdown.

The SVG is written by hand (no matplotlib), so this runs wherever Python does.
One panel per section present in the JSON, grouped horizontal bars, one group
per row:

* device to device: % of the run's D2D memcpy for strided, torch, cupy (and
  torch.compile when timed), a line at 100 % and a marker at the row's target;
* host <-> device: GB/s of strided, torch and the row's baseline, a marker at
  the row's GB/s target;
* CPU: GB/s of strided (1 thread and all), numpy and torch (all threads), a
  line at the host memcpy ceiling (all threads) and a marker at the target.

Usage:
    python bench/plot_copy.py RESULTS.json [--svg PATH] [--markdown]

--svg defaults to the JSON's path with .svg; --markdown prints the tables for
docs/benchmarks.md on stdout (and writes no SVG unless --svg is given).
"""

import argparse
import json
import math
import sys
from pathlib import Path
from xml.sax.saxutils import escape

COLORS = {"strided": "#1f5fbf", "strided 1 thr": "#8fb3e8", "torch": "#e4572e",
          "cupy": "#5a9e2f", "compile": "#8e5cc2", "numpy": "#4bb3c4", "baseline": "#999999"}
BAR, GAP, GROUP_GAP = 9, 1, 10
LEFT, PLOT_W, RIGHT = 330, 520, 40


def ok(r):
    return r is not None and r.get("status") == "ok"


def fmt(v, spec="%.1f"):
    return "-" if v is None else spec % v


def axis(v):
    """(top, step): a round tick step for values up to v, about 5 ticks, and the
    first tick at or above v."""
    v = max(v, 1e-9)
    p = 10 ** math.floor(math.log10(v / 5))
    step = next(m * p for m in (1, 2, 2.5, 5, 10) if m * p >= v / 5)
    return math.ceil(v / step - 1e-9) * step, step


def target_value(conds, kind, threads=None):
    """The value of a row's first condition of kind ('pct' or 'gbs'), in the
    unit it is drawn in; pct as a percentage."""
    for c in conds or []:
        if c[0] == kind and (threads is None or c[-1] == threads):
            return 100 * c[1] if kind == "pct" else c[1]
    return None


def label(row):
    return "%s%s %s%s" % ("MISMATCH " if row.get("mismatch") else "", row["id"], row["case"],
                          " " + row["dtype"] if row.get("dtype") not in (None, "float32") else "")


def values(results, series, key, rename=None):
    """series -> value for the contenders present: None where one is n/a."""
    out = {}
    for name, r in results.items():
        s = (rename or {}).get(name, name)
        if s in series:
            out[s] = r[key] if ok(r) else None
    return out


def d2d_panel(data):
    rows = [r for r in data.get("d2d", []) if "results" in r]
    series = [s for s in ("strided", "torch", "cupy", "compile")
              if any(ok(r["results"].get(s)) for r in rows)]
    groups = [(label(r), values(r["results"], series, "pct"),
               target_value(r.get("target_conditions"), "pct")) for r in rows]
    return ("Device to device: %% of the run's D2D memcpy (%.0f GB/s)"
            % data["ceiling"]["gbs"], "%", groups, series, (100.0, "memcpy"))


def transfer_panel(data):
    rows = [r for r in data.get("transfer", []) if "results" in r]
    series = ["strided", "torch", "baseline"]
    groups = [(label(r), values(r["results"], series, "gbs",
                                {n: "baseline" for n in r["results"] if n not in series[:2]}),
               target_value(r.get("target_conditions"), "gbs")) for r in rows]
    return "Host <-> device: GB/s of destination bytes", "GB/s", groups, series, None


def cpu_panel(data):
    rows = [r for r in data.get("cpu", []) if "results" in r]
    picks = [("strided 1 thr", "1", "strided"), ("strided", "all", "strided"),
             ("numpy", "1", "numpy"), ("torch", "all", "torch")]
    groups = []
    for r in rows:
        vals = {name: r["results"][t][n]["gbs"] if ok(r["results"][t][n]) else None
                for name, t, n in picks if n in r["results"][t]}
        target = target_value(r.get("target_conditions"), "gbs", "all")
        pct = target_value(r.get("target_conditions"), "pct", "all")
        if target is None and pct is not None and data["cpu_ceiling"].get("all"):
            target = pct / 100 * data["cpu_ceiling"]["all"]
        groups.append((label(r), vals, target))
    ceiling = data.get("cpu_ceiling", {}).get("all")
    return ("CPU: GB/s (strided, torch: all threads; numpy: 1 thread)", "GB/s", groups,
            [p[0] for p in picks], (ceiling, "memcpy, all threads") if ceiling else None)


def svg_panel(y0, title, unit, groups, series, ref):
    """SVG elements of one panel starting at y0, and the panel's height."""
    seen = [v for _, vals, _ in groups for v in vals.values() if v is not None]
    seen += [t for _, _, t in groups if t is not None] + ([ref[0]] if ref else [])
    top, step = axis(max(seen, default=1) * 1.02)

    def x(v):
        return LEFT + PLOT_W * min(v, top) / top
    el = ['<text x="10" y="%d" class="title">%s</text>' % (y0 + 16, escape(title))]
    y = y0 + 58
    legend_x = LEFT
    for s in series:
        el.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>'
                  % (legend_x, y0 + 24, COLORS.get(s, "#666")))
        el.append('<text x="%d" y="%d">%s</text>' % (legend_x + 14, y0 + 33, escape(s)))
        legend_x += 24 + 7 * len(s)
    el.append('<path d="M%d %d l6 -6 l6 6 l-6 6 z" class="target"/>' % (legend_x, y0 + 29))
    el.append('<text x="%d" y="%d">target</text>' % (legend_x + 16, y0 + 33))
    plot_top = y
    for name, vals, target in groups:
        h = len(series) * (BAR + GAP)
        el.append('<text x="%d" y="%d" text-anchor="end">%s</text>'
                  % (LEFT - 6, y + h / 2 + 4, escape(name)))
        for i, s in enumerate(series):
            by = y + i * (BAR + GAP)
            if vals.get(s) is not None:
                el.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s">'
                          '<title>%s: %.1f %s</title></rect>'
                          % (LEFT, by, x(vals[s]) - LEFT, BAR, COLORS.get(s, "#666"),
                             escape(s), vals[s], escape(unit)))
                el.append('<text x="%.1f" y="%d" class="small">%s</text>'
                          % (x(vals[s]) + 3, by + BAR - 1,
                             fmt(vals[s], "%.0f" if vals[s] >= 10 else "%.1f")))
            elif s in vals:
                el.append('<text x="%d" y="%d" class="small">%s n/a</text>'
                          % (LEFT + 3, by + BAR - 1, escape(s)))
        if target is not None:
            el.append('<path d="M%.1f %d l5 -5 l5 5 l-5 5 z" class="target"><title>target '
                      '%.4g %s</title></path>'
                      % (x(target) - 5, y + h / 2, target, escape(unit)))
        y += h + GROUP_GAP
    for i in range(round(top / step) + 1):
        v = step * i
        el.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="grid"/>'
                  % (x(v), plot_top - 4, x(v), y - GROUP_GAP + 4))
        el.append('<text x="%.1f" y="%d" text-anchor="middle" class="small">%g %s</text>'
                  % (x(v), y + 8, v, escape(unit)))
    if ref and ref[0]:
        el.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="ref"/>'
                  % (x(ref[0]), plot_top - 6, x(ref[0]), y - GROUP_GAP + 6))
        el.append('<text x="%.1f" y="%d" class="small">%s</text>'
                  % (x(ref[0]) + 3, plot_top - 6, escape(ref[1])))
    return el, y + 24 - y0


def svg(data):
    panels = []
    if data.get("d2d") and data.get("ceiling"):
        panels.append(d2d_panel(data))
    if data.get("transfer"):
        panels.append(transfer_panel(data))
    if data.get("cpu"):
        panels.append(cpu_panel(data))
    m = data["machine"]
    head = ["strided copy benchmark (the copy suite of bench/README.md), %s%s"
            % (m["date"], "; QUICK run (small sizes)" if data["method"].get("quick") else ""),
            "GPU %s, driver %s; CPU %s (%s cores); torch %s, cupy %s"
            % (m.get("gpu") or "none", m.get("driver") or "-", m["cpu_model"], m["cpu_count"],
               m["torch"], m["cupy"])]
    body = ['<text x="10" y="18" class="title">%s</text>' % escape(head[0]),
            '<text x="10" y="34">%s</text>' % escape(head[1])]
    y = 44
    if not panels:
        body.append('<text x="10" y="48">no results to draw</text>')
        y = 60
    for p in panels:
        el, h = svg_panel(y, *p)
        body += el
        y += h
    width = LEFT + PLOT_W + RIGHT
    style = ("text{font:11px sans-serif;fill:#222}.title{font-weight:bold;font-size:13px}"
             ".small{font-size:9px;fill:#444}.grid{stroke:#ddd}.ref{stroke:#000;"
             "stroke-dasharray:4 3}.target{fill:#d62728;stroke:#fff;stroke-width:1}")
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
            'viewBox="0 0 %d %d">\n<style>%s</style>\n<rect width="100%%" height="100%%" '
            'fill="#fff"/>\n%s\n</svg>\n' % (width, y, width, y, style, "\n".join(body)))


def md_table(head, rows):
    return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
                     + ["| " + " | ".join(r) + " |" for r in rows])


def met(row):
    text = "-" if row.get("met") is None else ("yes" if row["met"] else "**no**")
    if row.get("mismatch"):
        text += " (**MISMATCH: %s**)" % ", ".join(row["mismatch"])
    return text


def value(row, name, key, spec="%.1f", sub=None):
    res = row["results"][sub] if sub else row["results"]
    r = res.get(name)
    return fmt(r.get(key), spec) if ok(r) else ("n/a" if r else "-")


def unfinished(data, key):
    """A line naming the rows of a section that were skipped or failed, or None."""
    why = ["%s %s: %s" % (r["id"], r["case"], r.get("skipped") or "ERROR " + r["error"])
           for r in data.get(key, []) if "results" not in r]
    return "Not run: " + "; ".join(why) if why else None


def markdown(data):
    m = data["machine"]
    out = ["Machine: %s; GPU %s, driver %s; Python %s; numpy %s, torch %s, cupy %s; %s%s."
           % (m["cpu_model"], m.get("gpu") or "none", m.get("driver") or "-", m["python"],
              m["numpy"], m["torch"], m["cupy"], m["date"],
              "; QUICK run (small sizes)" if data["method"].get("quick") else "")]
    for key, what in (("gpu_skipped", "GPU"), ("cpu_skipped", "CPU")):
        if data.get(key):
            out.append("%s rows: %s." % (what, data[key]))
    rows = [r for r in data.get("d2d", []) if "results" in r]
    if rows:
        c = data["ceiling"]
        extra = [n for n in ("compile",) if any(n in r["results"] for r in rows)]
        out.append("Device to device, %% of the run's D2D memcpy (%.0f GB/s):"
                   % c["gbs"])
        out.append(md_table(
            ["row", "case", "dtype", "strided %", "torch %", "cupy %"]
            + ["%s %%" % n for n in extra] + ["x torch", "x cupy", "kernel", "target", "met"],
            [[r["id"], r["case"], r["dtype"]]
             + [value(r, n, "pct") for n in ["strided", "torch", "cupy"] + extra]
             + [fmt(r["speedup"].get("torch"), "%.2f"), fmt(r["speedup"].get("cupy"), "%.2f"),
                r.get("kernel") or "-", r["target"], met(r)] for r in rows]))
    rows = [r for r in data.get("small", []) if "results" in r]
    if rows:
        out.append("Small copies, us per call: host pipelined / host with a sync / device "
                   "in a CUDA graph:")
        names = ["strided", "strided+views", "torch", "cupy"]
        out.append(md_table(
            ["row", "case"] + names + ["target", "met"],
            [[r["id"], r["case"]]
             + [" / ".join(value(r, n, k, "%.2f") for k in ("pipe_us", "sync_us", "graph_us"))
                for n in names] + [r["target"], met(r)] for r in rows]))
    rows = [r for r in data.get("transfer", []) if "results" in r]
    if rows:
        out.append("Host <-> device, GB/s of destination bytes (wall time until complete):")
        out.append(md_table(
            ["row", "case", "strided", "torch", "baseline", "x torch", "target", "met"],
            [[r["id"], r["case"], value(r, "strided", "gbs"), value(r, "torch", "gbs"),
              next(("%s %s" % (n, value(r, n, "gbs")) for n in r["results"]
                    if n not in ("strided", "torch")), "-"),
              fmt(r["speedup"].get("torch"), "%.1f"), r["target"], met(r)] for r in rows]))
    rows = [r for r in data.get("cpu", []) if "results" in r]
    if rows:
        c = data["cpu_ceiling"]
        out.append("CPU, GB/s (host memcpy: %s GB/s on 1 thread, %s GB/s on all):"
                   % (fmt(c.get("1")), fmt(c.get("all"))))
        out.append(md_table(
            ["row", "case", "numpy", "strided 1 thr", "strided all thr", "torch all thr",
             "x numpy (all)", "% memcpy (all)", "kernel", "target", "met"],
            [[r["id"], r["case"], value(r, "numpy", "gbs", sub="1"),
              value(r, "strided", "gbs", sub="1"), value(r, "strided", "gbs", sub="all"),
              value(r, "torch", "gbs", sub="all"), fmt(r["speedup_vs_numpy"]["all"]),
              value(r, "strided", "pct", "%.0f", sub="all"), r.get("kernel") or "-",
              r["target"] or "-", met(r)] for r in rows]))
    for key in ("d2d", "small", "transfer", "cpu"):
        line = unfinished(data, key)
        if line:
            out.append(line)
    return "\n\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("json", help="the JSON that bench_copy.py --json wrote")
    p.add_argument("--svg", metavar="PATH",
                   help="where to write the chart (default: the JSON's path with .svg)")
    p.add_argument("--markdown", action="store_true",
                   help="print Markdown tables for docs/benchmarks.md")
    args = p.parse_args()
    data = json.loads(Path(args.json).read_text())
    if data.get("benchmark") != "copy":
        sys.exit("plot_copy.py: %s is not bench_copy.py output" % args.json)
    if args.markdown:
        print(markdown(data), end="")
    if args.svg or not args.markdown:
        path = Path(args.svg) if args.svg else Path(args.json).with_suffix(".svg")
        path.write_text(svg(data))
        print("wrote %s" % path, file=sys.stderr)


if __name__ == "__main__":
    main()
