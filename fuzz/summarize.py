#!/usr/bin/env python3
"""Summarize a scripts/fuzz run: one line per harness, and a JSON file.

    summarize.py RESULTS SECONDS OUT_JSON

RESULTS has one tab-separated line per harness: name, libFuzzer's exit
status, the findings directory (holding fuzz.log and any artifacts), the
number of regression inputs replayed, and the comma-separated regression
inputs that failed. Executions and exec/s come from libFuzzer's final
statistics (-print_final_stats=1), or from its last status line when it
stopped on a finding. Exits 1 when any harness found anything.
"""
import json
import pathlib
import re
import sys

# The artifacts libFuzzer writes for a finding (slow units are not findings).
FINDING_PREFIXES = ("crash-", "timeout-", "oom-", "leak-")


def parse_log(text):
    """Executions, exec/s and new corpus units from a libFuzzer log."""
    stats = dict(re.findall(r"^stat::(\w+):\s*(\d+)", text, re.M))
    execs = int(stats["number_of_executed_units"]) if "number_of_executed_units" in stats else None
    rate = int(stats["average_exec_per_sec"]) if "average_exec_per_sec" in stats else None
    new_units = int(stats["new_units_added"]) if "new_units_added" in stats else None
    if execs is None:
        # Stopped on a finding: the last status line "#N ... exec/s: R".
        lines = re.findall(r"^#(\d+)\s.*?exec/s: (\d+)", text, re.M)
        if lines:
            execs, rate = int(lines[-1][0]), int(lines[-1][1])
    return execs, rate, new_units


def main():
    results, seconds, out = sys.argv[1], int(sys.argv[2]), pathlib.Path(sys.argv[3])
    harnesses = []
    for row in pathlib.Path(results).read_text().splitlines():
        name, rc, findings, replayed, failed = row.split("\t")
        findings = pathlib.Path(findings)
        log = findings / "fuzz.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        execs, rate, new_units = parse_log(text)
        artifacts = sorted(str(p) for p in findings.iterdir()
                           if p.name.startswith(FINDING_PREFIXES))
        kinds = sorted({pathlib.Path(a).name.split("-")[0] for a in artifacts})
        failed = [f for f in failed.split(",") if f]
        finding = bool(artifacts) or int(rc) != 0 or bool(failed)
        harnesses.append({
            "name": name,
            "seconds": seconds,
            "executions": execs,
            "exec_per_sec": rate,
            "new_units": new_units,
            "exit_code": int(rc),
            "finding": finding,
            "kinds": kinds,
            "artifacts": artifacts,
            "log": str(log),
            "regressions": {"replayed": int(replayed), "failed": failed},
        })
    summary = {
        "seconds_per_harness": seconds,
        "total_executions": sum(h["executions"] or 0 for h in harnesses),
        "findings": sum(h["finding"] for h in harnesses),
        "harnesses": harnesses,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=2) + "\n")

    print("== fuzz summary (%d s per harness)" % seconds)
    for h in harnesses:
        what = "no finding"
        if h["finding"]:
            parts = []
            if h["regressions"]["failed"]:
                parts.append("regressions failing: " + ", ".join(h["regressions"]["failed"]))
            if h["artifacts"]:
                parts.append(", ".join(h["artifacts"]))
            elif h["exit_code"] != 0:
                parts.append("libFuzzer exited with %d (see %s)" % (h["exit_code"], h["log"]))
            what = "FINDING: " + "; ".join(parts)
        fuzzed = seconds > 0
        print("%-10s %10s execs %8s exec/s  %d regression(s) replayed  %s"
              % (h["name"], h["executions"] if h["executions"] is not None else "-",
                 h["exec_per_sec"] if h["exec_per_sec"] is not None else "-",
                 h["regressions"]["replayed"], what if fuzzed or h["finding"] else
                 "not fuzzed"))
    print("total: %d executions; summary in %s" % (summary["total_executions"], out))
    return 1 if summary["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
