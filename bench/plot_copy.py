"""Draw bench_copy.py's JSON as a bar chart (SVG and/or PNG, with matplotlib),
or print it as Markdown.

One panel per section present in the JSON, grouped horizontal bars, one group
per row:

* device to device: % of the run's D2D memcpy for strided, torch, cupy (and
  torch.compile and the CCCL anchor when timed), a line at 100 % and a marker
  at the row's target;
* host <-> device: GB/s of strided, torch and the row's baseline, a marker at
  the row's GB/s target;
* CPU: GB/s of strided (1 thread and all), numpy and torch (all threads), a
  line at the host memcpy ceiling (all threads) and a marker at the target.

Usage:
    python bench/plot_copy.py RESULTS.json [--svg PATH] [--png PATH] [--markdown]

Without --svg, --png or --markdown the chart goes to the JSON's path with
.svg; --markdown prints the tables for docs/benchmarks.md on stdout (and
draws nothing unless --svg or --png is given). Drawing needs matplotlib;
the tables do not.
"""

import argparse
import json
import math
import sys
from pathlib import Path

COLORS = {"strided": "#1f5fbf", "strided 1 thr": "#8fb3e8", "torch": "#e4572e",
          "cupy": "#5a9e2f", "compile": "#8e5cc2", "cccl": "#76b900", "numpy": "#4bb3c4",
          "baseline": "#999999"}
TARGET_COLOR = "#d62728"
# Inches: the width of the figure, the height of one bar, and what a panel
# needs besides its bars (title, legend, axis).
WIDTH, BAR, PANEL_EXTRA = 11.0, 0.085, 1.1


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
    series = [s for s in ("strided", "torch", "cupy", "compile", "cccl")
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


def draw_panel(ax, title, unit, groups, series, ref):
    """One panel into the axes ax: a group of bars per row, top to bottom."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import FormatStrFormatter, MultipleLocator

    seen = [v for _, vals, _ in groups for v in vals.values() if v is not None]
    seen += [t for _, _, t in groups if t is not None] + ([ref[0]] if ref and ref[0] else [])
    top, step = axis(max(seen, default=1) * 1.02)
    k = len(series)
    height = 0.9 / max(k, 1)
    for i, (_, vals, target) in enumerate(groups):
        for j, s in enumerate(series):
            y = i - 0.45 + (j + 0.5) * height
            v = vals.get(s)
            if v is not None:
                ax.barh(y, min(v, top), height=height * 0.9, color=COLORS.get(s, "#666"))
                ax.text(min(v, top) + top * 0.004, y, fmt(v, "%.0f" if v >= 10 else "%.1f"),
                        va="center", fontsize=6, color="#444")
            elif s in vals:
                ax.text(top * 0.004, y, "%s n/a" % s, va="center", fontsize=6, color="#444")
        if target is not None:
            ax.plot([min(target, top)], [i], marker="D", markersize=5, color=TARGET_COLOR,
                    markeredgecolor="white", linestyle="none", zorder=3)
    if ref and ref[0]:
        ax.axvline(ref[0], color="black", linestyle=(0, (4, 3)), linewidth=0.8, zorder=2)
        ax.text(ref[0] + top * 0.004, -0.7, ref[1], fontsize=7, va="bottom")
    ax.set_xlim(0, top * 1.06)
    ax.set_ylim(len(groups) - 0.5, -0.5)
    ax.set_yticks(range(len(groups)), [name for name, _, _ in groups], fontsize=7)
    ax.tick_params(axis="y", length=0)
    ax.xaxis.set_major_locator(MultipleLocator(step))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g " + unit.replace("%", "%%")))
    ax.tick_params(axis="x", labelsize=7)
    ax.grid(axis="x", color="#ddd", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    handles = [Patch(color=COLORS.get(s, "#666"), label=s) for s in series]
    handles.append(Line2D([], [], marker="D", markersize=5, color=TARGET_COLOR,
                          markeredgecolor="white", linestyle="none", label="target"))
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.0), ncol=len(handles),
              fontsize=7, frameon=False, borderaxespad=0.2, handlelength=1.2)
    ax.set_title(title, loc="left", fontsize=9, fontweight="bold", pad=18)


def draw(data, paths):
    """Draw the chart into each of paths (the format is the extension's)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Reproducible SVG: the same JSON gives the same bytes, text stays text.
    plt.rcParams.update({"svg.hashsalt": "strided", "svg.fonttype": "none",
                         "font.family": "sans-serif"})
    panels = []
    if data.get("d2d") and data.get("ceiling"):
        panels.append(d2d_panel(data))
    if data.get("transfer"):
        panels.append(transfer_panel(data))
    if data.get("cpu"):
        panels.append(cpu_panel(data))
    m = data["machine"]
    head = ("strided copy benchmark (the copy suite of bench/README.md), %s%s\n"
            "GPU %s, driver %s; CPU %s (%s cores); torch %s, cupy %s"
            % (m["date"], "; QUICK run (small sizes)" if data["method"].get("quick") else "",
               m.get("gpu") or "none", m.get("driver") or "-", m["cpu_model"], m["cpu_count"],
               m["torch"], m["cupy"]))
    heights = [len(p[2]) * max(len(p[3]), 1) * BAR + len(p[2]) * BAR + PANEL_EXTRA
               for p in panels] or [1.0]
    fig = plt.figure(figsize=(WIDTH, sum(heights) + 0.6))
    fig.suptitle(head, x=0.01, y=1 - 0.1 / (sum(heights) + 0.6), ha="left", va="top",
                 fontsize=9)
    if panels:
        grid = fig.add_gridspec(len(panels), 1, height_ratios=heights, left=0.3, right=0.97,
                                top=1 - 0.9 / (sum(heights) + 0.6), bottom=0.4 / sum(heights),
                                hspace=PANEL_EXTRA / (sum(heights) / len(panels)))
        for i, p in enumerate(panels):
            draw_panel(fig.add_subplot(grid[i]), *p)
    else:
        fig.text(0.01, 0.5, "no results to draw")
    for path in paths:
        fig.savefig(path, dpi=110, metadata={"Date": None} if path.suffix == ".svg" else None)
        print("wrote %s" % path, file=sys.stderr)
    plt.close(fig)


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
        extra = [n for n in ("compile", "cccl") if any(n in r["results"] for r in rows)]
        xs = ["torch", "cupy"] + [n for n in ("cccl",) if n in extra]
        out.append("Device to device, %% of the run's D2D memcpy (%.0f GB/s):"
                   % c["gbs"])
        if data.get("cccl"):
            a = data["cccl"]
            out.append("cccl: CCCL's cuda::experimental::copy (%s)."
                       % (a.get("about") or "version not printed" if a["status"] == "ok"
                          else "unavailable: %s" % a["reason"]))
        out.append(md_table(
            ["row", "case", "dtype", "strided %", "torch %", "cupy %"]
            + ["%s %%" % n for n in extra] + ["x " + n for n in xs]
            + ["kernel", "target", "met"],
            [[r["id"], r["case"], r["dtype"]]
             + [value(r, n, "pct") for n in ["strided", "torch", "cupy"] + extra]
             + [fmt(r["speedup"].get(n), "%.2f") for n in xs]
             + [r.get("kernel") or "-", r["target"], met(r)] for r in rows]))
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
                   help="where to write the chart as SVG (default, when neither --png nor "
                        "--markdown is given: the JSON's path with .svg)")
    p.add_argument("--png", metavar="PATH", help="where to write the chart as PNG")
    p.add_argument("--markdown", action="store_true",
                   help="print Markdown tables for docs/benchmarks.md")
    args = p.parse_args()
    data = json.loads(Path(args.json).read_text())
    if data.get("benchmark") != "copy":
        sys.exit("plot_copy.py: %s is not bench_copy.py output" % args.json)
    if args.markdown:
        print(markdown(data), end="")
    paths = [Path(x) for x in (args.svg, args.png) if x]
    if not paths and not args.markdown:
        paths = [Path(args.json).with_suffix(".svg")]
    if paths:
        draw(data, paths)


if __name__ == "__main__":
    main()
