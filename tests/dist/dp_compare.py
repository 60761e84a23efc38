#!/usr/bin/env python3
"""tests/dist/dp_compare.py: data-parallel training under mpirun gets the single-process weights.

Runs bg-fashion-mnist-dp three times on the same global batches: with 0 steps (the initial weights), in one process
(--world 1) and under `mpirun -np 2`, then compares the weight files element by element.

Bound: both runs compute the same float32 arithmetic except the order of the gradient sums. One process sums the
batch's 64 terms inside one reduction and divides by 64; two ranks each sum 32, divide by 32, and the two means are
added and halved. Each gradient element then differs by a few float32 roundings of its magnitude (relative 2^-24 per
rounding, summation error bound of order n * 2^-24 |terms| for n terms); SGD (lr 0.05, momentum 0.9) carries these
into the weights over 20 steps, where the model's own sensitivity to a weight change stays small over so few steps.
So |w_dp - w_1| <= ATOL + RTOL * |w_1| with ATOL = 1e-5 and RTOL = 1e-4: about 100 times the rounding of the
weights' magnitude (~0.1, ulp 7e-9 .. 1e-8) accumulated over 20 steps, and ~100 times below the change of the
weights in training (checked: the largest change from the initial weights must exceed 100 * ATOL), so a defect of
the size of one gradient step (a missing division by the number of ranks, a stale gradient) fails.

Usage: dp_compare.py OUTDIR EXAMPLE DATA_DIR MPIRUN [MPIRUN_ARGS...]
"""
import array
import os
import subprocess
import sys

ATOL, RTOL = 1e-5, 1e-4
STEPS, BATCH = "20", "64"


def run(cmd, what):
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        sys.exit(f"dp_compare: {what} failed with status {r.returncode}")


def load(path):
    a = array.array("f")
    with open(path, "rb") as f:
        a.frombytes(f.read())
    if sys.byteorder != "little":
        a.byteswap()
    return a


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    out, example, data, mpirun, mpi_args = argv[1], argv[2], argv[3], argv[4], argv[5:]
    os.makedirs(out, exist_ok=True)
    init, single, dp = (os.path.join(out, n) for n in ("init.f32", "single.f32", "dp.f32"))
    for p in (init, single, dp):
        if os.path.exists(p):
            os.unlink(p)
    common = ["--data", data, "--batch", BATCH, "--dev", "CPU"]
    run([example, "--world", "1", "--steps", "0", "--out", init] + common, "the initial weights")
    run([example, "--world", "1", "--steps", STEPS, "--out", single] + common, "the single-process run")
    run([mpirun] + mpi_args + ["-np", "2", example, "--steps", STEPS, "--out", dp] + common, "the mpirun -np 2 run")
    w0, w1, w2 = load(init), load(single), load(dp)
    if not (len(w0) == len(w1) == len(w2)) or not w1:
        sys.exit(f"dp_compare: weight files of {len(w0)}, {len(w1)}, {len(w2)} floats: expected equal, non-zero")
    moved = max(abs(a - b) for a, b in zip(w0, w1))
    worst, at = 0.0, -1
    for i, (a, b) in enumerate(zip(w1, w2)):
        excess = abs(a - b) - (ATOL + RTOL * abs(a))
        if at < 0 or excess > worst:
            worst, at = excess, i
    diff = max(abs(a - b) for a, b in zip(w1, w2))
    print(f"dp_compare: {len(w1)} weights; training moved them by up to {moved:.3g}; "
          f"largest |dp - single| {diff:.3g} (bound {ATOL:g} + {RTOL:g} |w|)")
    if moved <= 100 * ATOL:
        sys.exit(f"dp_compare: training moved the weights by only {moved:.3g}: expected more than {100 * ATOL:g}")
    if worst > 0:
        sys.exit(f"dp_compare: weight {at}: single {w1[at]!r}, mpirun -np 2 {w2[at]!r}: differ by "
                 f"{abs(w1[at] - w2[at]):.3g}, more than {ATOL:g} + {RTOL:g} * |w|")
    print("dp_compare: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
