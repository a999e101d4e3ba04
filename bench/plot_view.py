"""Draw the import rows of bench_view.py's JSON as a bar chart (SVG or PNG,
with matplotlib): ns per call of strided and cuda.core for every row that
makes a view (the "create" group), a marker at the row's target, and with
--before the same rows of an earlier run of strided, for a before/after
figure.

Targets: a DLPack import from NumPy or torch 500 ns, from CuPy 700 ns, the
CUDA Array Interface 900 ns, the array interface 1200 ns, a first read of
the properties 150 ns more than the import; other rows the JSON's own
target.

Usage:
    python bench/plot_view.py RESULTS.json [--before EARLIER.json] [--svg PATH] [--png PATH]

Without --svg or --png the chart goes to the JSON's path with .svg.
"""

import argparse
import json
import sys
from pathlib import Path

COLORS = {"strided": "#1f5fbf", "before": "#8fb3e8", "cuda.core": "#e4572e"}
TARGET_COLOR = "#d62728"


def ns(cell):
    return cell["ns"] if cell and cell.get("status") == "ok" else None


def target(row, results):
    """The row's target in ns (see the module's docstring)."""
    what, source = row["what"], row["source"]
    if what == "from_dlpack":
        return 700.0 if source.startswith("cupy") else 500.0
    if what == "from_cuda_array_interface":
        return 900.0
    if what == "from_array_interface":
        return 1200.0
    if what.startswith("create"):
        base = next((ns(r["strided"]) for r in results
                     if r["source"] == source and r["what"] == "from_dlpack"), None)
        return None if base is None else base + 150.0
    return row.get("target_ns")


def import_rows(data):
    return [r for r in data["results"] if r.get("group") == "create"
            and (ns(r.get("strided")) is not None or ns(r.get("cuda_core")) is not None)]


def draw(data, before, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = import_rows(data)
    if not rows:
        sys.exit("plot_view.py: no import rows with results")
    earlier = {r["row"]: ns(r.get("strided")) for r in before["results"]} if before else {}
    series = [("cuda.core", [ns(r.get("cuda_core")) for r in rows])]
    if before:
        series.append(("before", [earlier.get(r["row"]) for r in rows]))
    series.append(("strided", [ns(r.get("strided")) for r in rows]))
    bar = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(rows) * len(series) + 1.4))
    for k, (name, values) in enumerate(series):
        ys = [i + k * bar for i in range(len(rows))]
        ax.barh(ys, [v or 0 for v in values], height=bar, color=COLORS[name],
                label=("strided (before)" if name == "before" else name))
    for i, r in enumerate(rows):
        t = target(r, data["results"])
        if t:
            ax.plot([t, t], [i - bar / 2, i + bar * (len(series) - 0.5)], color=TARGET_COLOR,
                    linewidth=2, label="target" if i == 0 else None)
    ax.set_yticks([i + bar * (len(series) - 1) / 2 for i in range(len(rows))])
    ax.set_yticklabels([r["row"] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ns per call (median)")
    m = data.get("machine", {})
    ax.set_title("StridedMemoryView imports: strided %s, cuda.core %s (%s, %s)" % (
        m.get("strided"), m.get("cuda_core"), m.get("gpu") or "no GPU", m.get("date", "")[:10]),
        fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    print("wrote %s" % path)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results")
    p.add_argument("--before")
    p.add_argument("--svg")
    p.add_argument("--png")
    a = p.parse_args(argv)
    data = json.loads(Path(a.results).read_text())
    before = json.loads(Path(a.before).read_text()) if a.before else None
    paths = [x for x in (a.svg, a.png) if x] or [str(Path(a.results).with_suffix(".svg"))]
    for path in paths:
        draw(data, before, path)


if __name__ == "__main__":
    main()
