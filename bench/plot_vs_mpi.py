#!/usr/bin/python3
"""Draw bench/vs_mpi.sh's medians: one PNG per operation, latency against
size on log-log axes, one line per library and rank count (barrier, which has
no size, against the rank count instead). Sizes a library failed are left
out of its line; skipped libraries have no line.

usage: /usr/bin/python3 bench/plot_vs_mpi.py [--tls TLS] [--date DATE]
           [--runs N] MEDIANS_CSV OUT_DIR
Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

LIBS = [("ucoll", "ucoll", "tab:blue"),
        ("openmpi", "Open MPI", "tab:orange"),
        ("mpich", "MPICH", "tab:green")]
STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1)), "v")]


def number(s):
    try:
        return float(s)
    except ValueError:
        return None


def size_label(b, _pos=None):
    b = int(b)
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= scale and b % scale == 0:
            return "%d%s" % (b // scale, unit)
    return "%d" % b


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tls", default="?", help="UCX_TLS of the runs, for the title")
    ap.add_argument("--date", default="", help="date of the runs, for the title")
    ap.add_argument("--runs", default="", help="runs per figure, for the axis label")
    ap.add_argument("medians")
    ap.add_argument("outdir")
    a = ap.parse_args()

    data = {}  # op -> p -> lib -> [(bytes, us)]
    with open(a.medians, newline="") as f:
        for row in csv.DictReader(f):
            b, p = number(row["bytes"]), int(row["p"])
            for lib, _, _ in LIBS:
                us = number(row.get(lib) or "")
                if b is not None and us is not None:
                    data.setdefault(row["op"], {}).setdefault(p, {}).setdefault(lib, []).append((b, us))
    if not data:
        print("plot_vs_mpi.py: no figures in %s" % a.medians, file=sys.stderr)
        return 1

    ylabel = "latency, µs"
    if a.runs:
        ylabel += " (median of %s run%s of the mean over ranks)" % (a.runs, "" if a.runs == "1" else "s")
    for op, by_p in sorted(data.items()):
        fig, ax = plt.subplots(figsize=(9, 6), dpi=110)
        ps = sorted(by_p)
        if op == "barrier":
            for lib, name, color in LIBS:
                pts = [(p, by_p[p][lib][0][1]) for p in ps if lib in by_p[p]]
                if pts:
                    ax.plot([x for x, _ in pts], [y for _, y in pts], "-o", color=color,
                            label=name)
            ax.set_xscale("log", base=2)
            ax.set_xticks(ps)
            ax.set_xticklabels([str(p) for p in ps])
            ax.set_xlabel("ranks")
        else:
            for i, p in enumerate(ps):
                ls, marker = STYLES[i % len(STYLES)]
                for lib, name, color in LIBS:
                    pts = sorted(by_p[p].get(lib, []))
                    if pts:
                        ax.plot([x for x, _ in pts], [y for _, y in pts], linestyle=ls,
                                marker=marker, markersize=4, color=color,
                                label="%s p=%d" % (name, p))
            ax.set_xscale("log", base=2)
            sizes = sorted({b for libs in by_p.values() for pts in libs.values() for b, _ in pts})
            step = 1
            while len(sizes) > 14 * step:
                step *= 2
            ax.set_xticks(sizes[::step])
            ax.xaxis.set_major_formatter(FuncFormatter(size_label))
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel("bytes")
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: "%g" % y))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_ylabel(ylabel)
        ax.set_title("%s, UCX_TLS=%s%s" % (op, a.tls, ", " + a.date if a.date else ""))
        ax.grid(True, which="major", alpha=0.4)
        ax.grid(True, which="minor", alpha=0.15)
        ax.legend(fontsize="small", ncol=len(ps) if op != "barrier" else 1)
        fig.tight_layout()
        path = os.path.join(a.outdir, "%s.png" % op)
        fig.savefig(path)
        plt.close(fig)
        print("# %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
