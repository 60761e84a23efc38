/* tests/unit/am/test_trace.c: the AM cold bring-up's register trace against the reference trace of tinygrad's
 * Python mock (tinygrad test/mockgpu/am; the trace file is named by BG_TRACE_FILE).
 *
 * Boots the emulated GPU in the reference mock configuration (MOCK_AMD_MOCK: GC 12.0.0, SDMA 7.0.0, MP0/MP1
 * 14.0.2, 512 MiB) cold with a trace callback, names every absolute address through the device's register
 * tables (discovery bases; unnamed addresses stay "0x..."), parses the reference trace, aligns the two WRITE
 * sequences by register name with a longest-common-subsequence diff (weighted: same register and value beats
 * same register only), then aligns what is left on both sides once more ("moved": the same writes at another
 * point of the boot), and prints a per-block summary (SOC, MMHUB, IH, PSP, SMU, GFX, SDMA): matched writes, moved
 * writes, writes only in ours, only in the reference, value differences on matched/moved writes, plus the total
 * register reads/writes of both boots. Every difference must be covered by the allow-list below (kind, register
 * pattern (fnmatch), the most occurrences it may explain, reason); an unexplained difference, or an entry
 * explaining more than its bound, fails. BG_TRACE_DUMP=1 also prints our write sequence.
 * docs/design.md "Bring-up register trace vs the reference" carries the same list with the counts.
 *
 * BG_TRACE_CHIP selects the emulated chip and its allow-list: "gfx12" (default; MOCK_AMD_MOCK against tinygrad's
 * GC 12.0.0 mock, the trace file BG_TRACE_FILE names) or "gfx11" (MOCK_AMD_GFX11: GC 11.0.0, SDMA
 * 6.0.0, MP0/MP1 13.0.0, against tests/unit/am/traces/gfx11_boot_trace.txt, recorded by
 * tests/unit/am/traces/record_gfx11_trace.py from tinygrad's mock configured so). BG_TRACE_FW_OUT=<dir> only copies
 * the synthetic firmware set of the chip (tests/unit/am/fw_gen.c) into <dir>, for that recording script.
 *
 * BG_TRACE_FILE names the reference trace; when it is unset or absent the test is skipped (exit 77) with the
 * reason printed. Reference loops "[xN] ..." are expanded at most REF_REP_CAP times into the aligned sequence
 * (the x394240 SMU DPM loop of the echoing Python mock would otherwise dominate); the totals count all N. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "am/am_boot.h"
#include "am/am_dev.h"
#include "am/am_regs.h"
#include "amd_gpu.h"
#include "amd_testbed.h"
#include "baregpu/error.h"

#define BDF "0000:03:00.0"
#define REF_REP_CAP 16
#define NAME_MAX_LEN 72

typedef struct acc {
  char name[NAME_MAX_LEN];
  uint32_t val;
  bool exact; /* false: a repetition of a reference loop, whose values the file does not show */
  bool done;  /* consumed by the alignment */
} acc;

typedef struct accv {
  acc *v;
  size_t n, cap;
  unsigned long nrd, nwr; /* all accesses (reference: with every loop repetition) */
} accv;

static void accv_push(accv *a, const char *name, uint32_t val, bool exact) {
  if (a->n == a->cap) {
    a->cap = a->cap ? a->cap * 2 : 1024;
    a->v = realloc(a->v, a->cap * sizeof(*a->v));
    if (!a->v) {
      fprintf(stderr, "out of memory\n");
      exit(1);
    }
  }
  snprintf(a->v[a->n].name, NAME_MAX_LEN, "%s", name);
  a->v[a->n].val = val;
  a->v[a->n].exact = exact;
  a->v[a->n].done = false;
  a->n++;
}

/* ---- address -> name over the device's register tables ---- */
typedef struct addrname {
  uint32_t addr;
  uint32_t ord; /* insertion order: on an address two tables share, the first table listed names it */
  const char *name;
} addrname;

static addrname *amap;
static size_t namap;

static int cmp_addr(const void *a, const void *b) {
  const addrname *x = a, *y = b;
  if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
  return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static void build_amap(const bg_am_dev *d) {
  const struct {
    const struct bg_am_regtab *t;
    int hwip;
  } tabs[] = {{d->regs.gc, GC_HWIP},     {d->regs.mmhub, MMHUB_HWIP}, {d->regs.nbio, NBIO_HWIP},
              {d->regs.mp, MP0_HWIP},    {d->regs.smu, MP1_HWIP},     {d->regs.hdp, HDP_HWIP},
              {d->regs.osssys, OSSSYS_HWIP}};
  size_t cap = 0;
  for (size_t k = 0; k < sizeof(tabs) / sizeof(tabs[0]); k++)
    if (tabs[k].t) cap += tabs[k].t->nregs;
  amap = calloc(cap ? cap : 1, sizeof(*amap));
  namap = 0;
  for (size_t k = 0; k < sizeof(tabs) / sizeof(tabs[0]); k++) {
    if (!tabs[k].t) continue;
    for (size_t i = 0; i < tabs[k].t->nregs; i++) {
      uint32_t a;
      if (bg_am_reg_abs(&d->disc, tabs[k].hwip, 0, &tabs[k].t->regs[i], &a) != 0) continue;
      amap[namap].addr = a;
      amap[namap].ord = (uint32_t)namap;
      amap[namap].name = tabs[k].t->regs[i].name;
      namap++;
    }
  }
  qsort(amap, namap, sizeof(*amap), cmp_addr);
}

static const char *addr_name(uint32_t addr, char *buf, size_t n) {
  size_t lo = 0, hi = namap;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (amap[mid].addr < addr) lo = mid + 1;
    else hi = mid;
  }
  if (lo < namap && amap[lo].addr == addr) return amap[lo].name; /* lowest ord among equal addresses */
  snprintf(buf, n, "0x%x", addr);
  return buf;
}

/* ---- our boot ---- */
static accv ours;
static bool tracing;
typedef struct raw {
  bool write;
  uint32_t addr, val;
} raw;
static raw *raws;
static size_t nraw, craw;

static void tracer(void *ctx, bool write, uint32_t addr, uint32_t val) {
  (void)ctx;
  if (!tracing) return;
  if (nraw == craw) {
    craw = craw ? craw * 2 : 4096;
    raws = realloc(raws, craw * sizeof(*raws));
    if (!raws) exit(1);
  }
  raws[nraw++] = (raw){write, addr, val};
}

static mock_amd_chip chip = MOCK_AMD_MOCK;

/* Copy the regular files of directory `from` into `to` (created if missing). */
static int copy_dir(const char *from, const char *to) {
  if (mkdir(to, 0755) != 0 && errno != EEXIST) return fprintf(stderr, "BG_TRACE_FW_OUT %s: %s\n", to, strerror(errno)), -1;
  DIR *dir = opendir(from);
  if (!dir) return fprintf(stderr, "%s: %s\n", from, strerror(errno)), -1;
  int rc = 0;
  for (struct dirent *de; rc == 0 && (de = readdir(dir));) {
    if (de->d_name[0] == '.') continue;
    char src[4096], dst[4096];
    snprintf(src, sizeof(src), "%s/%s", from, de->d_name);
    snprintf(dst, sizeof(dst), "%s/%s", to, de->d_name);
    FILE *in = fopen(src, "rb"), *out = in ? fopen(dst, "wb") : NULL;
    char buf[65536];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof(buf), in)) > 0)
      if (fwrite(buf, 1, n, out) != n) rc = -1;
    if (!in || !out) rc = -1;
    if (in) fclose(in);
    if (out && fclose(out) != 0) rc = -1;
    if (rc) fprintf(stderr, "copying %s to %s failed\n", src, dst);
    else printf("firmware: %s\n", dst);
  }
  closedir(dir);
  return rc;
}

static int boot_ours(const char *fw_out) {
  amd_testbed tb;
  mock_amd_cfg cfg = {.chip = chip, .bdf = BDF};
  if (amd_testbed_new(&tb, &cfg, "bg_trace") != 0) {
    fprintf(stderr, "%s\n", bg_last_error());
    return -1;
  }
  if (fw_out) {
    int e = copy_dir(tb.fw_dir, fw_out);
    amd_testbed_free(&tb);
    return e;
  }
  int rc = -1;
  bg_am_dev *d = NULL;
  bg_am_open_opts o = {.fw_dir = tb.fw_dir, .timeout_ms = 2000, .settle_ms = -1, .reset_delay_ms = -1,
                       .trace = tracer, .trace_ctx = NULL};
  tracing = true;
  if (bg_am_dev_open(BDF, &o, &d) != 0) {
    fprintf(stderr, "open: %s\n", bg_last_error());
    goto out;
  }
  bg_am_boot_report rep;
  if (bg_am_boot(d, NULL, &rep) != 0) {
    fprintf(stderr, "boot: %s\n", bg_last_error());
    goto out;
  }
  tracing = false;
  if (rep.warm || rep.mode1_reset) {
    fprintf(stderr, "expected a cold boot without mode1 reset\n");
    goto out;
  }
  build_amap(d);
  char buf[32];
  for (size_t i = 0; i < nraw; i++)
    if (!raws[i].write && strcmp(addr_name(raws[i].addr, buf, sizeof(buf)), "regMMMC_VM_FB_LOCATION_TOP") == 0) {
      printf("ours: regMMMC_VM_FB_LOCATION_TOP reads 0x%x\n", raws[i].val);
      break;
    }
  for (size_t i = 0; i < nraw; i++) {
    if (raws[i].write) {
      ours.nwr++;
      accv_push(&ours, addr_name(raws[i].addr, buf, sizeof(buf)), raws[i].val, true);
    } else {
      ours.nrd++;
    }
  }
  printf("ours: %s, VRAM %llu MiB, cold boot (open + bg_am_boot): %lu register reads, %lu writes\n", d->disc.arch,
         (unsigned long long)(d->vram_size >> 20), ours.nrd, ours.nwr);
  char msg[4096];
  rc = amd_testbed_failures(&tb, msg, sizeof(msg)) == 0 ? 0 : -1;
  if (rc) fprintf(stderr, "model failures:\n%s", msg);
out:
  tracing = false;
  bg_am_dev_close(d);
  amd_testbed_free(&tb);
  return rc;
}

/* ---- reference trace ---- */
typedef struct ref_op {
  bool write;
  char name[NAME_MAX_LEN];
  uint32_t val;
} ref_op;

/* "R name -> val" / "W name = val"; 0 on success. */
static int parse_op(const char *s, ref_op *op) {
  while (*s == ' ') s++;
  char kind, name[NAME_MAX_LEN], sep[4];
  unsigned long v;
  if (sscanf(s, "%c %71s %3s %lx", &kind, name, sep, &v) != 4) return -1;
  if (kind == 'W' && strcmp(sep, "=") == 0) op->write = true;
  else if (kind == 'R' && strcmp(sep, "->") == 0) op->write = false;
  else return -1;
  snprintf(op->name, sizeof(op->name), "%s", name);
  op->val = (uint32_t)v;
  return 0;
}

static accv ref;
static unsigned long ref_capped; /* loop repetitions left out of the aligned sequence */

static int load_ref(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[1024];
  int lineno = 0, rc = 0;
  while (fgets(line, sizeof(line), f)) {
    lineno++;
    line[strcspn(line, "\r\n")] = 0;
    if (!line[0] || line[0] == '#') continue;
    unsigned long reps = 1;
    char *body = line;
    if (line[0] == '[') {
      if (sscanf(line, "[x%lu]", &reps) != 1 || !(body = strchr(line, ']'))) goto bad;
      body++;
    }
    ref_op ops[16];
    int nops = 0;
    for (char *save = NULL, *tok = strtok_r(body, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
      if (nops == 16 || parse_op(tok, &ops[nops]) != 0) goto bad;
      nops++;
    }
    if (!nops) goto bad;
    for (unsigned long r = 0; r < reps; r++)
      for (int k = 0; k < nops; k++) {
        if (ops[k].write) ref.nwr++;
        else ref.nrd++;
        if (r >= REF_REP_CAP) continue;
        if (ops[k].write) accv_push(&ref, ops[k].name, ops[k].val, r == 0);
      }
    if (reps > REF_REP_CAP) ref_capped += reps - REF_REP_CAP;
    continue;
  bad:
    fprintf(stderr, "%s:%d: unparsable line: %s\n", path, lineno, line);
    rc = -1;
  }
  fclose(f);
  return rc;
}

/* ---- blocks ---- */
enum { B_SOC, B_MMHUB, B_IH, B_PSP, B_SMU, B_GFX, B_SDMA, B_N };
static const char *const block_names[B_N] = {"SOC", "MMHUB", "IH", "PSP", "SMU", "GFX", "SDMA"};

static bool pre(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static int block_of(const char *n) {
  if (pre(n, "regMM")) return B_MMHUB;
  if (pre(n, "regIH_")) return B_IH;
  if (pre(n, "regMPASP_") || pre(n, "regMP0_") || pre(n, "mmMP0_")) return B_PSP;
  if (pre(n, "mmMP1_") || pre(n, "regMP1_")) return B_SMU;
  if (pre(n, "regSDMA")) return B_SDMA;
  if (pre(n, "regRCC_") || pre(n, "regBIF_") || pre(n, "regSCRATCH_") || pre(n, "regHDP_") || strcmp(n, "0x0") == 0)
    return B_SOC;
  return B_GFX; /* GC table: GCVM/GCMC hub, CP, RLC, GRBM, SH_MEM, TCP, GDC doorbells, unnamed CP_HQD dwords */
}

/* ---- allow-list ---- */
enum kind { ONLY_OURS = 1, ONLY_REF = 2, VALUE = 4, MOVED = 8 };
typedef struct allow {
  unsigned kinds;
  const char *pattern; /* fnmatch(3) over the register name */
  unsigned max;        /* most differences this entry may explain */
  const char *reason;
  unsigned hits;
} allow;

static allow allows12[] = {
    /* -- SOC / HDP -- */
    {ONLY_REF, "0x0", 31,
     "HDP flush: the reference writes 0 to dword REMAP_HDP_MEM_FLUSH_CNTL/4, i.e. dword 0 since nothing programs "
     "the remap in its run (REMAP reads 0); ours flushes through the remapped dword 0x1fc00 (below)", 0},
    {ONLY_OURS, "regBIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL", 1,
     "HDP remap in SOC init as Linux nbif_v6_3_1_remap_hdp_registers (hole 0x7f000); the reference never writes it", 0},
    {ONLY_OURS, "0xe4e", 1, "BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL (unnamed: not in the generated tables) = hole + 4, as Linux", 0},
    {ONLY_OURS, "0x1fc00", 31, "HDP flush: 0 to HDP_MEM_FLUSH_CNTL at the remapped hole 0x7f000 (hdp_v7_0_flush_hdp)", 0},
    {ONLY_OURS | ONLY_REF | MOVED, "regSCRATCH_REG[67]", 4,
     "boot magic / clean-state flag written last, after the compute and SDMA queues are up (reference: after clock "
     "gating, before the queues); the second alignment pairs the hub flushes below instead, which cross them", 0},
    {VALUE, "regSCRATCH_REG7", 1, "our magic BG_AM_BOOT_MAGIC 0xB6000001, not tinygrad's 0xA0000008 (am_dev.h)", 0},
    {ONLY_OURS, "regSCRATCH_REG6", 1,
     "booting mark SCRATCH_REG6 = 1 after the reset decision (am_boot.c bg_am_boot_reset_if_alive; tinygrad's "
     "AMDev.__init__ writes is_booting first too): a process killed during the cold boot leaves it, the next open "
     "resets (tests/stress/kill.c)", 0},
    /* -- GMC (MMHUB + GC hub); the GC hub is programmed after the RLC autoload as in the reference (and Linux) -- */
    {VALUE, "reg??MC_VM_SYSTEM_APERTURE_HIGH_ADDR", 2,
     "FB top: the emulated GPU reports FB_LOCATION_TOP 0x1f (inclusive, 512 MiB), the Python mock 0x20 -> "
     "aperture 0x7c0 vs 0x800", 0},
    {MOVED, "reg??VM_INVALIDATE_ENG17_*", 3,
     "one TLB flush of each hub right after its enable (Linux gmc_v11_0_gart_enable, gfx_v11_0_gfxhub_enable; "
     "tinygrad flushes no hub at enable): MMHUB REQ + SEM release, GC REQ, aligned with later reference flushes", 0},
    {MOVED, "regMMVM_L2_BANK_SELECT_RESERVED_CID2", 1, "the MMHUB flush after its enable (gfx12 bank-select write)", 0},
    {ONLY_REF, "regGCVM_INVALIDATE_ENG17_REQ", 4,
     "TLB flushes: the reference maps the queue buffers into the kernel VA (one GC+MM flush pair per map_range); "
     "ours hands the CP/SDMA their VRAM MC addresses, no mapping, no flush", 0},
    {ONLY_REF, "regMMVM_INVALIDATE_ENG17_*", 8, "TLB flushes (MMHUB REQ + SEM release), as above", 0},
    {ONLY_REF, "regMMVM_L2_BANK_SELECT_RESERVED_CID2", 4, "TLB flushes (MMHUB gfx12 bank-select write), as above", 0},
    /* -- PSP / SMU -- */
    {ONLY_OURS, "regMPASP_SMN_C2PMSG_3[56]", 8,
     "PSP bootloader: our synthetic firmware set (fw_gen) also carries the SOC_DRV, INTF_DRV, DBG_DRV and RAS_DRV "
     "sOS components (one C2PMSG_36 + C2PMSG_35 pair each); the reference's synthetic blobs only KDB, SPL, "
     "SYS_DRV, SOS", 0},
    {ONLY_REF, "mmMP1_SMN_C2PMSG_[689][260]", 12,
     "SMU set_clocks(-1): the reference's GetDpmFreqByIndex loop runs x394240 on the echoing Python mock (aligned "
     "x16 here); ours asks the emulated SMU for 4 clocks x (level count + 2 levels), so the loop's surplus shows as "
     "reference-only", 0},
    /* -- GFX / SDMA -- */
    {VALUE, "regCP_*_PRGRM_CNTR_START", 3,
     "RS64 ucode start (from the firmware header >> 2): our synthetic firmware 0x4000/0x8000/0xc000, the reference's "
     "0x48d0", 0},
    {VALUE, "regCP_HQD_*ADDR*", 6,
     "buffer addresses: compute ring rptr/wptr/EOP at VRAM MC addresses (HI 0), the reference at kernel VA "
     "0x20_0000_0000+", 0},
    {VALUE, "regCP_HQD_PQ_BASE*", 2, "buffer address: compute ring base, as above", 0},
    {VALUE, "regSDMA0_QUEUE0_RB_*", 6, "buffer addresses: SDMA ring base and rptr/wptr-poll addresses, as above", 0},
};

/* gfx11 (MOCK_AMD_GFX11) against tinygrad's mock configured as GC 11.0.0 (tests/unit/am/traces/gfx11_boot_trace.txt) */
static allow allows11[] = {
    /* -- SOC / HDP -- */
    {ONLY_REF, "0x0", 32,
     "HDP flush: the reference writes 0 to dword REMAP_HDP_MEM_FLUSH_CNTL/4, i.e. dword 0 since nothing programs "
     "the remap in its run (REMAP reads 0); ours flushes through the remapped dword 0x1fc00 (below)", 0},
    {ONLY_OURS, "regBIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL", 1,
     "HDP remap in SOC init as Linux nbio_v4_3_remap_hdp_registers (hole 0x7f000); the reference never writes it", 0},
    {ONLY_OURS, "0xe4e", 1, "BIF_BX0_REMAP_HDP_REG_FLUSH_CNTL (unnamed: not in the generated tables) = hole + 4, as Linux", 0},
    {ONLY_OURS, "0x1fc00", 27, "HDP flush: 0 to HDP_MEM_FLUSH_CNTL at the remapped hole 0x7f000 (hdp_v6_0_flush_hdp)", 0},
    {ONLY_OURS | ONLY_REF | MOVED, "regSCRATCH_REG[67]", 4,
     "boot magic / clean-state flag written last, after the compute and SDMA queues are up (reference: after clock "
     "gating, before the queues); the second alignment pairs the hub flushes below instead, which cross them", 0},
    {VALUE, "regSCRATCH_REG7", 1, "our magic BG_AM_BOOT_MAGIC 0xB6000001, not tinygrad's 0xA0000008 (am_dev.h)", 0},
    /* -- GMC: the GC hub after the RLC autoload in both (tinygrad AM_GFX.init_hw, Linux gfx_v11_0_hw_init) -- */
    {VALUE, "reg??MC_VM_SYSTEM_APERTURE_HIGH_ADDR", 2,
     "FB top: the emulated GPU reports FB_LOCATION_TOP 0x1f (inclusive, 512 MiB), the Python mock 0x20 -> "
     "aperture 0x7c0 vs 0x800", 0},
    {MOVED, "reg??VM_INVALIDATE_ENG17_*", 3,
     "one TLB flush of each hub right after its enable (Linux gmc_v11_0_gart_enable, gfx_v11_0_gfxhub_enable; "
     "tinygrad flushes no hub at enable): MMHUB REQ + SEM release, GC REQ, aligned with later reference flushes", 0},
    {MOVED, "regMMVM_L2_BANK_SELECT_RESERVED_CID2", 1, "the MMHUB flush after its enable (GC >= 11 bank-select write)", 0},
    {ONLY_REF, "regGCVM_INVALIDATE_ENG17_REQ", 4,
     "TLB flushes: the reference maps the queue buffers into the kernel VA (one GC+MM flush pair per map_range); "
     "ours hands the CP/SDMA their VRAM MC addresses, no mapping, no flush", 0},
    {ONLY_REF, "regMMVM_INVALIDATE_ENG17_*", 8, "TLB flushes (MMHUB REQ + SEM release), as above", 0},
    {ONLY_REF, "regMMVM_L2_BANK_SELECT_RESERVED_CID2", 4, "TLB flushes (MMHUB bank-select write), as above", 0},
    /* -- SMU -- */
    {VALUE | MOVED, "regMP1_SMN_C2PMSG_[68][26]", 27,
     "SMU set_clocks(-1): the reference reads every clock's DPM levels first, then sets SoftMin/SoftMax of each; ours "
     "reads and sets one clock after the other (same messages, other order), and the two SMU models answer other "
     "frequencies (the emulated SMU's DPM table vs 1000 + 100 * level MHz in the recording script)", 0},
    /* -- GFX / SDMA -- */
    {VALUE, "regCP_HQD_*ADDR*", 6,
     "buffer addresses: compute ring rptr/wptr/EOP at VRAM MC addresses (HI 0), the reference at kernel VA "
     "0x20_0000_0000+", 0},
    {VALUE, "regCP_HQD_PQ_BASE*", 2, "buffer address: compute ring base, as above", 0},
    {VALUE, "regSDMA0_QUEUE0_RB_*", 6, "buffer addresses: SDMA ring base and rptr/wptr-poll addresses, as above", 0},
};
static allow *allows = allows12;
static size_t NALLOW = sizeof(allows12) / sizeof(allows12[0]);

/* Alignment weight of a pair: 0 for different registers, 1 for the same register with another value, 2 for the same
 * register and value (or a reference loop repetition, whose value is unknown): a weighted LCS, so that e.g. PSP
 * bootloader commands line up by command rather than by position. */
static uint32_t match_weight(const acc *o, const acc *r) {
  if (strcmp(o->name, r->name) != 0) return 0;
  return !r->exact || o->val == r->val ? 2 : 1;
}

static unsigned long unexplained;

static void classify(unsigned kind, const char *name, uint32_t vo, uint32_t vr) {
  for (size_t i = 0; i < NALLOW; i++) {
    if (!(allows[i].kinds & kind) || fnmatch(allows[i].pattern, name, 0) != 0) continue;
    allows[i].hits++;
    return;
  }
  unexplained++;
  if (kind == VALUE || kind == MOVED)
    printf("  UNEXPLAINED %s %-48s ours 0x%x ref 0x%x\n", kind == VALUE ? "value    " : "moved    ", name, vo, vr);
  else printf("  UNEXPLAINED %s %-48s 0x%x\n", kind == ONLY_OURS ? "ours-only" : "ref-only ", name,
              kind == ONLY_OURS ? vo : vr);
}

int main(void) {
  const char *cs = getenv("BG_TRACE_CHIP");
  if (cs && strcmp(cs, "gfx11") == 0) {
    chip = MOCK_AMD_GFX11, allows = allows11, NALLOW = sizeof(allows11) / sizeof(allows11[0]);
  } else if (cs && strcmp(cs, "gfx12") != 0) {
    fprintf(stderr, "BG_TRACE_CHIP=%s: expected gfx11 or gfx12\n", cs);
    return 1;
  }
  const char *fw_out = getenv("BG_TRACE_FW_OUT");
  if (fw_out) return boot_ours(fw_out) == 0 ? 0 : 1;
  const char *path = getenv("BG_TRACE_FILE");
  struct stat st;
  if (!path || stat(path, &st) != 0) {
    printf("SKIP: reference trace %s not found (BG_TRACE_FILE; shared/docs/reference is not checked out)\n",
           path ? path : "(BG_TRACE_FILE unset)");
    return 77;
  }
  if (load_ref(path) != 0) return 1;
  if (boot_ours(NULL) != 0) return 1;
  printf("reference: %lu register reads, %lu writes (%zu writes aligned; %lu loop repetitions beyond x%d left out)\n",
         ref.nrd, ref.nwr, ref.n, ref_capped, REF_REP_CAP);

  if (getenv("BG_TRACE_DUMP"))
    for (size_t k = 0; k < ours.n; k++) printf("  ours W %s = 0x%x\n", ours.v[k].name, ours.v[k].val);
  /* Pass 1: weighted LCS of the two write sequences by name (in place). Pass 2: LCS of what pass 1 left over on either
   * side (the same writes issued at another point of the boot: "moved"). The rest is ours-only / ref-only. */
  unsigned long cnt[B_N][5] = {{0}}; /* matched, moved, ours-only, ref-only, value-diff */
  printf("differences not covered by the allow-list:\n");
  for (int pass = 0; pass < 2; pass++) {
    size_t *oi = malloc((ours.n + 1) * sizeof(size_t)), *ri = malloc((ref.n + 1) * sizeof(size_t));
    size_t n = 0, m = 0;
    for (size_t k = 0; k < ours.n; k++)
      if (!ours.v[k].done) oi[n++] = k;
    for (size_t k = 0; k < ref.n; k++)
      if (!ref.v[k].done) ri[m++] = k;
    size_t w = m + 1;
    uint32_t *L = calloc((n + 1) * w, sizeof(*L));
    if (!L || !oi || !ri) return 1;
    for (size_t i = n; i-- > 0;)
      for (size_t j = m; j-- > 0;)
      {
        uint32_t best = L[(i + 1) * w + j] >= L[i * w + j + 1] ? L[(i + 1) * w + j] : L[i * w + j + 1];
        uint32_t wt = match_weight(&ours.v[oi[i]], &ref.v[ri[j]]);
        if (wt && L[(i + 1) * w + j + 1] + wt > best) best = L[(i + 1) * w + j + 1] + wt;
        L[i * w + j] = best;
      }
    size_t i = 0, j = 0;
    while (i < n && j < m) {
      acc *o = &ours.v[oi[i]], *r = &ref.v[ri[j]];
      uint32_t wt = match_weight(o, r);
      if (wt && L[i * w + j] == L[(i + 1) * w + j + 1] + wt) {
        int b = block_of(o->name);
        cnt[b][pass]++;
        if (pass == 1) classify(MOVED, o->name, o->val, r->val);
        if (r->exact && o->val != r->val) {
          cnt[b][4]++;
          classify(VALUE, o->name, o->val, r->val);
        }
        o->done = r->done = true;
        i++, j++;
      } else if (L[i * w + j] == L[(i + 1) * w + j]) {
        i++;
      } else {
        j++;
      }
    }
    free(L);
    free(oi);
    free(ri);
  }
  for (size_t k = 0; k < ours.n; k++)
    if (!ours.v[k].done) {
      cnt[block_of(ours.v[k].name)][2]++;
      classify(ONLY_OURS, ours.v[k].name, ours.v[k].val, 0);
    }
  for (size_t k = 0; k < ref.n; k++)
    if (!ref.v[k].done) {
      cnt[block_of(ref.v[k].name)][3]++;
      classify(ONLY_REF, ref.v[k].name, 0, ref.v[k].val);
    }

  unsigned long tot[5] = {0};
  printf("\n%-6s %8s %6s %10s %9s %10s\n", "block", "matched", "moved", "ours-only", "ref-only", "value-diff");
  for (int b = 0; b < B_N; b++) {
    printf("%-6s %8lu %6lu %10lu %9lu %10lu\n", block_names[b], cnt[b][0], cnt[b][1], cnt[b][2], cnt[b][3],
           cnt[b][4]);
    for (int k = 0; k < 5; k++) tot[k] += cnt[b][k];
  }
  printf("%-6s %8lu %6lu %10lu %9lu %10lu\n", "total", tot[0], tot[1], tot[2], tot[3], tot[4]);

  int over = 0;
  printf("\nallow-list (hits / max):\n");
  for (size_t k = 0; k < NALLOW; k++) {
    const allow *a = &allows[k];
    printf("  %-40s %s%s%s%s %4u / %-4u %s\n", a->pattern, a->kinds & ONLY_OURS ? "O" : "-",
           a->kinds & ONLY_REF ? "R" : "-", a->kinds & MOVED ? "M" : "-", a->kinds & VALUE ? "V" : "-", a->hits,
           a->max, a->reason);
    if (a->hits > a->max) {
      printf("  ^^^ entry explains more differences than its bound\n");
      over++;
    }
  }
  printf("\n%lu unexplained difference(s)\n", unexplained);
  /* The same work with no more register accesses than the reference driver (issue 16: tinygrad's AM cold-boots GC
   * 11.0.0 with 169 reads and 470 writes, the trace header; ours read the SMU response twice per message before). */
  int more = ours.nrd > ref.nrd || ours.nwr > ref.nwr || ours.nrd + ours.nwr > ref.nrd + ref.nwr;
  printf("register accesses: ours %lu (%lu reads, %lu writes), reference %lu (%lu reads, %lu writes)%s\n",
         ours.nrd + ours.nwr, ours.nrd, ours.nwr, ref.nrd + ref.nwr, ref.nrd, ref.nwr,
         more ? ": MORE than the reference" : "");
  free(ours.v);
  free(ref.v);
  free(raws);
  free(amap);
  return unexplained == 0 && over == 0 && !more ? 0 : 1;
}
