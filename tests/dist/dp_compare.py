#!/usr/bin/env python3
"""tests/dist/dp_compare.py: data-parallel training under mpirun gets the single-process weights.

Runs bg-fashion-mnist-dp three times on the same global batches: with 0 steps (the initial weights), in one process
(--world 1) and under `mpirun -np 2`, then compares the weight files element by element.

Bound: both runs compute the same float32 arithmetic except the order of the gradient sums. One process sums the
batch's 64 samples inside one reduction and divides by 64; two ranks each sum 32, divide by 32, and the two means are
added and halved (bg_dist mean). A float32 sum of n terms is exact to n * 2^-24 * sum|terms| at worst (Higham,
"Accuracy and Stability of Numerical Algorithms", 4.2) and to about sqrt(n) * 2^-24 * sum|terms| typically. The conv
weight's gradient sums batch * 576 positions (n = 36864: 2.2e-3 worst, 1.1e-5 typical, relative to the sum of the
terms' magnitudes), the others fewer. SGD is linear in the gradients, so over 20 steps these relative differences carry
into each parameter tensor's change from its initial value (the forward of the next steps amplifies them a little). The
bound, per parameter tensor: max |w_dp - w_1| <= RTOL * max |w_1 - w_0| with RTOL = 1e-3, between the typical and the
worst-case rounding of the longest sum (measured: 4.9e-5 for the conv weight, 7e-6 and below for the others). A defect
of the size of a gradient step (the mean's division skipped: steps twice as large; a stale gradient) changes the
weights by a fraction of their change itself, hundreds of times the bound. The weights must also have moved (a run
that trains nothing would compare equal).

Usage: dp_compare.py [--dev DEV --steps N --batch N] OUTDIR EXAMPLE DATA_DIR MPIRUN [MPIRUN_ARGS...]
(defaults CPU, 20, 64; each rank of the MOCKPCI+AMD run is its own process with its own emulated GPU)
"""
import array
import os
import subprocess
import sys

RTOL = 1e-3
STEPS, BATCH, C1 = "20", "64", 4
# The weight file's tensors (fashion_mnist_dp.c, --c1 4): conv w (C1,1,5,5), conv b (C1), linear w (10, C1*144), b (10).
TENSORS = [("conv weight", C1 * 25), ("conv bias", C1), ("linear weight", 10 * C1 * 144), ("linear bias", 10)]


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
    global STEPS, BATCH
    dev = "CPU"
    while len(argv) > 2 and argv[1] in ("--dev", "--steps", "--batch"):
        if argv[1] == "--dev":
            dev = argv[2]
        elif argv[1] == "--steps":
            STEPS = argv[2]
        else:
            BATCH = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) < 5:
        sys.exit(__doc__)
    out, example, data, mpirun, mpi_args = argv[1], argv[2], argv[3], argv[4], argv[5:]
    os.makedirs(out, exist_ok=True)
    init, single, dp = (os.path.join(out, n) for n in ("init.f32", "single.f32", "dp.f32"))
    for p in (init, single, dp):
        if os.path.exists(p):
            os.unlink(p)
    common = ["--data", data, "--batch", BATCH, "--dev", dev, "--c1", str(C1)]
    run([example, "--world", "1", "--steps", "0", "--out", init] + common, "the initial weights")
    run([example, "--world", "1", "--steps", STEPS, "--out", single] + common, "the single-process run")
    run([mpirun] + mpi_args + ["-np", "2", example, "--steps", STEPS, "--out", dp] + common, "the mpirun -np 2 run")
    w0, w1, w2 = load(init), load(single), load(dp)
    want = sum(n for _, n in TENSORS)
    if not (len(w0) == len(w1) == len(w2) == want):
        sys.exit(f"dp_compare: weight files of {len(w0)}, {len(w1)}, {len(w2)} floats: expected {want} each")
    at, bad = 0, []
    for name, n in TENSORS:
        moved = max(abs(w1[i] - w0[i]) for i in range(at, at + n))
        diff, worst = max((abs(w1[i] - w2[i]), i) for i in range(at, at + n))
        print(f"dp_compare: {name}: {n} weights, moved by up to {moved:.3g} in training, "
              f"largest |dp - single| {diff:.3g} = {diff / moved if moved else float('inf'):.3g} of that "
              f"(bound {RTOL:g})")
        if moved < 1e-3:
            bad.append(f"{name}: training moved the weights by only {moved:.3g}: expected more than 1e-3")
        elif diff > RTOL * moved:
            bad.append(f"{name}: weight {worst - at}: single {w1[worst]!r}, mpirun -np 2 {w2[worst]!r}: differ by "
                       f"{diff:.3g}, more than {RTOL:g} * {moved:.3g}")
        at += n
    for b in bad:
        print("dp_compare: " + b)
    if bad:
        return 1
    print("dp_compare: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
