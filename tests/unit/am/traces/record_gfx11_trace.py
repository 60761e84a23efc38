#!/usr/bin/env python3
"""Record the AM cold bring-up register trace of tinygrad's Python mock GPU configured as GC 11.0.0.

Not run in CI. It produces tests/unit/am/traces/gfx11_boot_trace.txt, the independent reference of the meson test
am-trace-gfx11 (tests/unit/am/test_trace.c with BG_TRACE_CHIP=gfx11).

    python3 tests/unit/am/traces/record_gfx11_trace.py --tinygrad /path/to/tinygrad --fw-dir DIR [-o OUT]

--tinygrad  a tinygrad checkout (its test/mockgpu/am is the emulated GPU; nothing in it is modified: the changes
            below are monkeypatches made by this script, in this process only).
--fw-dir    the firmware files to load: psp_13_0_0_sos.bin, smu_13_0_0.bin, sdma_6_0_0.bin, gc_11_0_0_{mec,imu,rlc}.bin.
            Our own synthetic set is written by `BG_TRACE_CHIP=gfx11 BG_TRACE_FW_OUT=DIR build/tests/unit/am/test_trace`
            (tests/unit/am/fw_gen.c), so both boots load the same firmware.

What the script changes in tinygrad's mock (test/mockgpu/am/amgpu.py), by monkeypatching:
  * IP versions: GC 11.0.0, SDMA0 6.0.0, MMHUB 3.0.0, NBIO 4.3.0, MP0/MP1 13.0.0, HDP 6.0.0, OSSSYS 6.0.0 (the IP
    versions of baregpu's MOCK_AMD_GFX11, tests/mockgpu/amd_gpu.c); the IP bases stay the mock's (baregpu's
    discovery_gen uses the same ones for GC/MMHUB/NBIO/MP/HDP/OSSSYS);
  * the PSP block leaves the MP1 mailbox addresses (named by mp_13_0_0 too) to the SMU block;
  * the SMU answers GetDpmFreqByIndex(clk << 16 | 0xff) with 2 DPM levels and level i with 1000 + 100 * i MHz
    (the mock would echo the argument, i.e. 0xff.. levels);
  * the page-table walker treats PDE_PTE (bit 54), the gfx11 leaf flag, as a leaf (the mock knows only gfx12's);
  * fetch_fw reads --fw-dir (no download, no hash check);
  * every MockMMIOInterface access is logged; the trace stops after the first SDMA queue enable (RB_CNTL with
    RB_ENABLE, then its IB_CNTL write), as the gfx12 reference does.
Format (that of the gfx12 reference trace test_trace.c reads): "W <reg> = <val>", "R <reg> -> <val>", runs of an
identical block of up to 8 accesses folded into "[xN] a ; b ; c" (values of the first repetition).
"""
import argparse, os, subprocess, sys


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
  ap.add_argument("--tinygrad", required=True, help="path of a tinygrad checkout")
  ap.add_argument("--fw-dir", required=True, help="directory with the gfx11 firmware files")
  ap.add_argument("--commit", help="tinygrad commit for the header (default: git rev-parse HEAD in --tinygrad)")
  ap.add_argument("-o", "--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "gfx11_boot_trace.txt"))
  a = ap.parse_args()
  tg = os.path.abspath(a.tinygrad)
  if not os.path.isfile(os.path.join(tg, "test", "mockgpu", "am", "amgpu.py")):
    sys.exit(f"--tinygrad {tg}: no test/mockgpu/am/amgpu.py (not a tinygrad checkout with the AM mock)")
  for f in ("psp_13_0_0_sos.bin", "smu_13_0_0.bin", "sdma_6_0_0.bin", "gc_11_0_0_mec.bin", "gc_11_0_0_imu.bin",
            "gc_11_0_0_rlc.bin"):
    if not os.path.isfile(os.path.join(a.fw_dir, f)):
      sys.exit(f"--fw-dir {a.fw_dir}: missing {f}")
  os.environ["DEV"] = "MOCKPCI+AMD"
  sys.path.insert(0, tg)
  os.chdir(tg)

  import ctypes, struct
  from tinygrad.runtime.autogen.am import am
  import test.mockgpu.am.amgpu as amgpu  # patched before anything imports test.mockgpu.mockgpu, which builds the GPU

  amgpu.IP_VERSIONS.update({am.GC_HWIP: (11, 0, 0), am.SDMA0_HWIP: (6, 0, 0), am.MMHUB_HWIP: (3, 0, 0),
                            am.NBIO_HWIP: (4, 3, 0), am.MP0_HWIP: (13, 0, 0), am.MP1_HWIP: (13, 0, 0),
                            am.HDP_HWIP: (6, 0, 0), am.OSSSYS_HWIP: (6, 0, 0)})


  # MP0 13.0.0's register module (mp_13_0_0) also names the MP1 mailbox (regMP1_SMN_C2PMSG_*, same bases in the
  # mock): keep those addresses out of the PSP block so that they reach the SMU block (mp_14_0_2 has no such names)
  psp_init = amgpu.MockPSP.__init__
  def psp_init_no_mp1(self, gpu, mmio):
    psp_init(self, gpu, mmio)
    for n in [n for n in self._n2a if "MP1_" in n]: self.addrs.discard(self._n2a[n]); self._a2n.pop(self._n2a.pop(n), None)
  amgpu.MockPSP.__init__ = psp_init_no_mp1

  # SMU: two DPM levels (smu_v13_0_0 PPSMC_MSG_GetDpmFreqByIndex)
  from tinygrad.runtime.autogen.am import smu_13_0_0
  smu_write = amgpu.MockSMU.write
  def smu_write_2levels(self, reg, val):
    smu_write(self, reg, val)
    if reg == self._c2pmsg_66 and val == smu_13_0_0.PPSMC_MSG_GetDpmFreqByIndex:
      arg = self.mmio.regs.get(self._c2pmsg_82, 0)
      self.mmio.regs[self._c2pmsg_82] = 2 if (arg & 0xff) == 0xff else 1000 + 100 * (arg & 0xff)
  amgpu.MockSMU.write = smu_write_2levels

  # gfx11 leaf flag in the walker
  PDE_PTE_GFX11 = 1 << 54
  def walk(self, pt_paddr, level, va_acc, out, va_base):
    shift = [39, 30, 21, 12][level]
    for i in range(512):
      pte = struct.unpack_from('<Q', self.gpu.vram, pt_paddr + i * 8)[0]
      if not (pte & am.AMDGPU_PTE_VALID): continue
      va, pa = va_acc | (i << shift), pte & 0x0000FFFFFFFFF000
      if level == 3 or (pte & PDE_PTE_GFX11): out[va_base + va] = (pa, 1 << shift, bool(pte & am.AMDGPU_PTE_SYSTEM))
      else: walk(self, pa, level + 1, va, out, va_base)
  amgpu.MockMMU._walk = walk

  # the access log; names from tinygrad's register modules on the mock's bases, tables in the order baregpu's
  # test_trace names addresses (gc, mmhub, nbio, mp0, mp1 SMU mailbox, hdp, osssys: the first name of an address wins)
  from tinygrad.runtime.support.amd import AMDReg, import_asic_regs
  names = {}
  for prefix, ver, hwip in (("gc", None, am.GC_HWIP), ("mmhub", None, am.MMHUB_HWIP), ("nbio", None, am.NBIO_HWIP),
                            ("mp", None, am.MP0_HWIP), ("mp", (11, 0, 0), am.MP1_HWIP), ("hdp", None, am.HDP_HWIP),
                            ("osssys", None, am.OSSSYS_HWIP)):
    regs = import_asic_regs(prefix, ver or amgpu.IP_VERSIONS[hwip], cls=lambda **kw: AMDReg(**kw, bases={0: amgpu.IP_BASES[hwip]}))
    if prefix == "mp" and ver: regs = {n: r for n, r in regs.items() if n.startswith("mmMP1_")}
    for n, r in regs.items(): names.setdefault(r.addr[0], n)
  log, state = [], {"on": True}
  def name_of(mmio, addr): return names.get(addr, f"{addr:#x}")
  get, put = amgpu.MockMMIOInterface.__getitem__, amgpu.MockMMIOInterface.__setitem__
  def getitem(self, index):
    v = get(self, index)
    if state["on"] and isinstance(index, int): log.append(("R", name_of(self, index), v))
    return v
  def setitem(self, index, val):
    put(self, index, val)
    if state["on"] and isinstance(index, int):
      n = name_of(self, index)
      log.append(("W", n, val))
      if n.startswith("regSDMA") and n.endswith("_RB_CNTL") and (val & 1): state["rb"] = True
      elif state.get("rb") and n.startswith("regSDMA") and n.endswith("_IB_CNTL"): state["on"] = False
  amgpu.MockMMIOInterface.__getitem__, amgpu.MockMMIOInterface.__setitem__ = getitem, setitem

  # importing amdev imports test.mockgpu.mockgpu, which builds the mock GPU: after every patch above
  import tinygrad.runtime.support.am.amdev as amdev
  def fetch_fw(path, name, sha256):
    with open(os.path.join(a.fw_dir, name), "rb") as f: return f.read()
  amdev.fetch_fw = fetch_fw
  from tinygrad import Device
  dev = Device["AMD"]
  state["on"] = False

  def fmt(op): return f"W {op[1]} = {op[2]:#x}" if op[0] == "W" else f"R {op[1]} -> {op[2]:#x}"
  def key(op): return (op[0], op[1]) if op[0] == "R" else op
  lines, i = [], 0
  while i < len(log):
    best = (1, 1)  # (block length, repetitions)
    for L in range(1, 9):
      r = 1
      while i + (r + 1) * L <= len(log) and all(key(log[i + r * L + k]) == key(log[i + k]) for k in range(L)): r += 1
      if r > 1 and r * L > best[0] * best[1]: best = (L, r)
    L, r = best
    body = " ; ".join(fmt(op) for op in log[i:i + L])
    lines.append(body if r == 1 else f"[x{r}] {body}")
    i += L * r

  commit = a.commit or subprocess.run(["git", "-C", tg, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
  nrd, nwr = sum(1 for op in log if op[0] == "R"), sum(1 for op in log if op[0] == "W")
  hdr = f"""# AM cold bring-up MMIO trace of tinygrad's Python mock configured as GC 11.0.0 (reference of am-trace-gfx11)
#
# How produced: tests/unit/am/traces/record_gfx11_trace.py (its docstring lists every change, all monkeypatches):
#   python3 tests/unit/am/traces/record_gfx11_trace.py --tinygrad <checkout> --fw-dir <dir> [--commit <sha>]
# tinygrad commit {commit or "unknown"}: test/mockgpu/am/amgpu.py + amdriver.py (DEV=MOCKPCI+AMD) driving
# tinygrad/runtime/support/am/amdev.py and ip.py unmodified; Device["AMD"] opened once.
# Mock config: GC 11.0.0, SDMA 6.0.0, MMHUB 3.0.0, NBIO 4.3.0, MP0/MP1 13.0.0, HDP 6.0.0, OSSSYS 6.0.0 (baregpu's
# MOCK_AMD_GFX11), the mock's IP bases, VRAM 512 MiB, fresh device (SCRATCH_REG7 == 0, sOS not alive -> no mode1
# reset); the SMU answers GetDpmFreqByIndex with 2 DPM levels; firmware: baregpu's synthetic gfx11 set
# (tests/unit/am/fw_gen.c, written by BG_TRACE_CHIP=gfx11 BG_TRACE_FW_OUT=<dir> test_trace).
# Format: "W <reg> = <val>" register write, "R <reg> -> <val>" register read; "[xN] a ; b" = the pattern repeated N
# times (values of the first repetition). {nrd} reads, {nwr} writes; ends at the first SDMA queue enable.
#
"""
  with open(a.out, "w") as f: f.write(hdr + "\n".join(lines) + "\n")
  print(f"{a.out}: {len(lines)} lines, {nrd} reads, {nwr} writes (device {dev.device})")
  os._exit(0)  # the mock's device threads / fds: no teardown needed for a recording


if __name__ == "__main__":
  main()
