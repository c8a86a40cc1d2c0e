#!/usr/bin/env python3
"""
What the Python binding adds to a small collective: a blocking 8-byte
allreduce (float64 x 1, sum, out of place) through ucoll from Python, with
numpy arrays and with torch tensors, against the same call in C as
ucoll_bench measures it, at 2 ranks under ucollrun.

    /usr/bin/python3 bench/py_overhead.py [-C BUILDDIR] [-n 1,2] [--rounds R] [--iters N]

Each round runs both jobs, one after the other, the order alternating
between rounds:
    ucollrun -n 2 BUILDDIR/bench/ucoll_bench allreduce --dtype float64 --op sum
             --min-size 8 --max-size 8 --iters N --warmup W
    ucollrun -n 2 /usr/bin/python3 bench/py_overhead.py --worker ...
             (PYTHONPATH=BUILDDIR/python)
and both time each call the same way (OSU: one clock read before and after
every call, a barrier between calls, each rank's mean, then the mean over
the ranks). It prints the medians over the rounds and the differences in
microseconds. -n 1,2 adds a run at one rank (a singleton under ucollrun:
the same calls without any peer), where the difference is the binding's
own cost with nothing to wait for. Measure on an idle machine: the script
prints the load average first and says when it is high.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PYTHON = "/usr/bin/python3"


def worker(args):
    """One rank of the Python job: prints "numpy US" and "torch US" at rank 0."""
    import numpy as np

    import ucoll

    libs = [("numpy", np.ones(1), np.zeros(1))]
    if not args.no_torch:
        try:
            import torch
        except ImportError:
            pass
        else:
            libs.append(("torch", torch.ones(1, dtype=torch.float64),
                         torch.zeros(1, dtype=torch.float64)))
    with ucoll.init() as ctx:
        w = ctx.world
        clock = time.perf_counter
        lat = np.zeros(1)
        tot = np.zeros(1)
        for name, s, r in libs:
            allreduce, barrier = w.allreduce, w.barrier
            total = 0.0
            for it in range(args.warmup + args.iters):
                t0 = clock()
                allreduce(s, r)
                t1 = clock()
                if it >= args.warmup:
                    total += t1 - t0
                barrier()
            lat[0] = total / args.iters
            w.reduce(lat, tot, root=0)
            if w.rank == 0:
                print("%s %.4f" % (name, tot[0] / w.size * 1e6), flush=True)


def run(cmd, env=None):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s%s" % (p.returncode, " ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def c_figure(args):
    out = run([args.ucollrun, "-n", str(args.n), args.bench, "allreduce", "--dtype", "float64",
               "--op", "sum", "--min-size", "8", "--max-size", "8", "--iters", str(args.iters),
               "--warmup", str(args.warmup)])
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "8":
            return {"C": float(f[1])}
    sys.exit("no 8-byte line in ucoll_bench's output:\n" + out)


def py_figures(args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(args.builddir, "python")
    cmd = [args.ucollrun, "-n", str(args.n), PYTHON, os.path.abspath(__file__), "--worker",
           "--iters", str(args.iters), "--warmup", str(args.warmup)]
    if args.no_torch:
        cmd.append("--no-torch")
    res = {}
    for line in run(cmd, env).splitlines():
        f = line.split()
        if len(f) == 2 and f[0] in ("numpy", "torch"):
            res[f[0]] = float(f[1])
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-C", "--builddir", default=os.path.join(ROOT, "build"),
                    help="build directory with launcher/ucollrun, bench/ucoll_bench and "
                         "python/ucoll (default: build)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--warmup", type=int, default=2000)
    ap.add_argument("-n", default="2", help="ranks, or a list: -n 1,2 measures at 1 rank (the "
                    "binding without any network) and at 2 (default 2)")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    args.builddir = os.path.abspath(args.builddir)
    args.ucollrun = os.path.join(args.builddir, "launcher", "ucollrun")
    args.bench = os.path.join(args.builddir, "bench", "ucoll_bench")
    for f in (args.ucollrun, args.bench, os.path.join(args.builddir, "python", "ucoll")):
        if not os.path.exists(f):
            sys.exit("%s is missing: build first (ninja -C %s)" % (f, args.builddir))
    load = os.getloadavg()
    print("# load average %.2f %.2f %.2f on %d cores%s" % (
        load[0], load[1], load[2], os.cpu_count(),
        "  (busy: the figures are noisy)" if load[0] > 0.5 else ""))
    print("# %d rounds of %d calls (+%d warm-up) per job, UCOLL_WAIT=%s" % (
        args.rounds, args.iters, args.warmup, os.environ.get("UCOLL_WAIT", "auto")))
    sizes = [int(n) for n in str(args.n).split(",")]
    for n in sizes:
        args.n = n
        measure(args)


def measure(args):
    figs = {}
    for r in range(args.rounds):
        jobs = [c_figure, py_figures] if r % 2 == 0 else [py_figures, c_figure]
        row = {}
        for job in jobs:
            row.update(job(args))
        for k, v in row.items():
            figs.setdefault(k, []).append(v)
        print("%d ranks, round %d: %s" % (args.n, r + 1, "  ".join(
            "%s %.2f us" % kv for kv in sorted(row.items()))), flush=True)
    c = statistics.median(figs["C"])
    print("\n| allreduce 8 B, %d rank%s | median us | min us | above C (median) |"
          % (args.n, "" if args.n == 1 else "s"))
    print("|---|---|---|---|")
    for k in ("C", "numpy", "torch"):
        if k in figs:
            m = statistics.median(figs[k])
            print("| %s | %.2f | %.2f | %s |" % (k, m, min(figs[k]),
                                                "" if k == "C" else "%+.2f" % (m - c)))
    print(flush=True)


if __name__ == "__main__":
    main()
