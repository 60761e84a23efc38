#!/usr/bin/env python3
"""tests/bench/tinygrad/tg_bench.py: tinygrad's side of tests/bench/vs-tinygrad.sh (our code, run against a tinygrad
checkout on PYTHONPATH; python3 and the standard library only). One measurement per process, printed as one line
"figures: key=value ..." that the script collects; the script gives the device (DEV=CPU) and the compile cache
(CACHEDB: a fresh file for a cold run, the cold run's file for a warm one).

  tg_bench.py launch N    replayed launch: a TinyJit'd one-kernel function (x + 1 into a new buffer) called N times
                          after its capture, timed in batches of 500 with a synchronize between batches outside the
                          timing (as bench-launch's re-submit); wall and this thread's CPU ns per call
  tg_bench.py tiny        the computations of bench-compute's tiny_kernels() (tests/bench/compute.c), each read back to
                          the host; seconds for the pass (after the import; the device opens inside it, as
                          bg_tctx_open does inside ours)
  tg_bench.py matmul N    float32 N x N x N matmul of fresh random inputs: one untimed run (compile), then the best
                          of 3 timed runs (realize + synchronize), as bench-compute does; GFLOPS
  tg_bench.py usb N       USB transfers per launch on tinygrad's emulated ASM24 bridge (DEV=MOCKUSB+AMD,
                          test/mockgpu/usb.py): every transfer method of its USB3 class is counted over N replayed
                          launches of the TinyJit'd kernel (synchronize outside the count), as bench-usb counts ours
"""
import sys
import time


def launch(n: int) -> None:
  from tinygrad import Device, Tensor, TinyJit

  @TinyJit
  def step(x: Tensor) -> Tensor:
    return (x + 1).realize()

  x = Tensor.ones(16).contiguous().realize()
  dev = Device[x.device]
  for _ in range(3):  # TinyJit runs the function, captures it on the second call, replays from the third
    step(x)
  dev.synchronize()
  batch, wall, cpu, done = 500, 0, 0, 0
  while done < n:
    w0, c0 = time.perf_counter_ns(), time.thread_time_ns()
    for _ in range(batch):
      step(x)
    wall += time.perf_counter_ns() - w0
    cpu += time.thread_time_ns() - c0
    done += batch
    dev.synchronize()
  print(f"figures: launch calls={done} replay_ns={wall / done:.0f} replay_cpu_ns={cpu / done:.0f}")


def tiny() -> None:
  from tinygrad import Tensor, dtypes
  t0 = time.perf_counter()
  Tensor(2.0).item()
  Tensor([[1.0, 2.0], [3.0, 4.0]]).sum(1).elu().tolist()
  (Tensor([1.0, 2.0, 3.0]) + Tensor([4.0, 5.0, 6.0])).tolist()
  (Tensor([1, 2, 3], dtype=dtypes.int32) + Tensor([4, 5, 6], dtype=dtypes.int32)).tolist()
  (Tensor.ones(16).contiguous() + Tensor.ones(16).contiguous()).tolist()
  Tensor.ones(8).contiguous().cat(Tensor.zeros(8).contiguous()).tolist()
  Tensor.ones(256).contiguous().sum().item()
  Tensor.eye(3).tolist()
  (Tensor.ones(64, 64).contiguous() @ Tensor.eye(64).contiguous()).tolist()
  (Tensor.ones(64, 64, dtype=dtypes.half).contiguous() @ Tensor.eye(64, dtype=dtypes.half).contiguous()).tolist()
  (Tensor.ones(1, 64).contiguous() @ Tensor.eye(64).contiguous()).tolist()
  Tensor.rand(10).tolist()
  print(f"figures: tiny seconds={time.perf_counter() - t0:.4f}")


def matmul(n: int) -> None:
  from tinygrad import Device, Tensor

  def once() -> float:
    a, b = Tensor.rand(n, n).realize(), Tensor.rand(n, n).realize()
    Device[a.device].synchronize()
    t0 = time.perf_counter()
    (a @ b).realize()
    Device[a.device].synchronize()
    return time.perf_counter() - t0

  once()
  t = min(once() for _ in range(3))
  print(f"figures: matmul n={n} gflops={2.0 * n * n * n / t * 1e-9:.2f}")


def usb(n: int) -> None:
  from tinygrad import Device, Tensor, TinyJit
  from tinygrad.runtime.support import usb as tg_usb
  count = [0]

  def counted(fn):
    def call(*args, **kwargs):
      count[0] += 1
      return fn(*args, **kwargs)
    return call

  cls = tg_usb.USB3  # test/mockgpu/usb.py's MockUSB3 when DEV names a MOCK interface
  for name in ("control_write", "control_read", "bulk_write", "bulk_read", "bulk_write_async", "control_write_async",
               "control_read_async"):
    if hasattr(cls, name):
      setattr(cls, name, counted(getattr(cls, name)))

  @TinyJit
  def step(x: Tensor) -> Tensor:
    return (x + 1).realize()

  x = Tensor.ones(16).contiguous().realize()
  dev = Device[x.device]
  for _ in range(3):
    step(x)
  dev.synchronize()
  c0 = count[0]
  for _ in range(n):
    step(x)
  c1 = count[0]
  dev.synchronize()
  print(f"figures: usb launches={n} transfers_per_launch={(c1 - c0) / n:.2f} device={x.device}")


def main(argv: list[str]) -> int:
  if len(argv) == 3 and argv[1] == "launch" and argv[2].isdigit():
    launch(int(argv[2]))
  elif len(argv) == 2 and argv[1] == "tiny":
    tiny()
  elif len(argv) == 3 and argv[1] == "matmul" and argv[2].isdigit():
    matmul(int(argv[2]))
  elif len(argv) == 3 and argv[1] == "usb" and argv[2].isdigit():
    usb(int(argv[2]))
  else:
    print("usage: tg_bench.py launch N | tiny | matmul N | usb N", file=sys.stderr)
    return 2
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv))
