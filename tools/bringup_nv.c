/* tools/bringup_nv.c: bg-bringup on an NVIDIA GPU (bringup_nv.h): the boot of nv/nv_pci.c, shown step by step. */
#include "tools/bringup_nv.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "baregpu/error.h"
#include "bg_config.h"
#include "nv/nv_pci.h"
#include "platform/pci.h"
#include "tools/json.h"
#include "tools/smi_fmt.h"
#include "util/clock.h"

static const char *family_name(bg_nv_family f) {
  switch (f) {
    case BG_NV_AMPERE: return "Ampere";
    case BG_NV_ADA: return "Ada";
    case BG_NV_HOPPER: return "Hopper";
    case BG_NV_BLACKWELL: return "Blackwell";
  }
  return "?";
}

/* RPCs of the whole boot: the pre-queued ones count in their step, not in the GSP's send counter. */
static uint64_t total_rpcs(const bg_nv_pci *d) {
  uint64_t n = 0;
  for (unsigned i = 0; i < d->nsteps; i++) n += d->steps[i].rpcs;
  return n;
}

static void print_text(const char *bdf, const bg_nv_pci *d, double ms, const char *err, FILE *f) {
  char sz[32], sz2[32];
  if (!d) {
    fprintf(f, "bg-bringup: %s  NVIDIA\nFAILED after %.1f ms: %s\n", bdf, ms, err);
    return;
  }
  fprintf(f, "bg-bringup: %s  NVIDIA %s (%s, sm_%u%u), boot %s, MMU v%d\n", bdf, d->chip->name,
          family_name(d->chip->family), d->chip->sm_major, d->chip->sm_minor,
          d->chip->fsp_boot ? "FSP chain of trust" : "FWSEC-FRTS + Booter", d->chip->mmu_ver);
  fprintf(f, "  PMC_BOOT_0      0x%08" PRIx32 "  PMC_BOOT_42 0x%08" PRIx32 "\n", d->boot0, d->boot42);
  fprintf(f, "  VRAM            %s (BAR1 %s, %s BAR)%s\n", smi_fmt_size(d->vram_size, sz, sizeof(sz)),
          smi_fmt_size(d->bar1_size, sz2, sizeof(sz2)), d->large_bar ? "large" : "small",
          d->warm ? "; a GSP left running was reset" : "");
  fprintf(f, "  firmware        %s (GSP-RM " BG_NV_GSP_VERSION ")\n", d->fw.dir);
  fprintf(f, "  steps:%*s%10s %10s %10s %6s\n", 32, "", "ms", "reg reads", "reg writes", "RPCs");
  for (unsigned i = 0; i < d->nsteps; i++) {
    const bg_nv_boot_step *st = &d->steps[i];
    fprintf(f, "    %-34s %10.2f %10" PRIu64 " %10" PRIu64 " %6" PRIu64 "\n", st->name, (double)st->ns / 1e6,
            st->reg_reads, st->reg_writes, st->rpcs);
  }
  if (err) fprintf(f, "FAILED after %.1f ms: %s\n", ms, err);
  else
    fprintf(f, "booted in %.1f ms (register reads %" PRIu64 ", writes %" PRIu64 ", RPCs %" PRIu64 ")\n", ms,
            d->reg_reads, d->reg_writes, total_rpcs(d));
}

static void print_json(const char *bdf, const bg_nv_pci *d, double ms, const char *err, FILE *f) {
  jw w;
  jw_init(&w, f);
  jw_obj_begin(&w);
  jw_kstr(&w, "tool", "bg-bringup");
  jw_kstr(&w, "version", BG_VERSION);
  jw_kstr(&w, "bdf", bdf);
  jw_kstr(&w, "vendor", "NV");
  jw_kbool(&w, "ok", err == NULL);
  jw_kstr(&w, "error", err);
  jw_key(&w, "chip");
  if (d) {
    jw_obj_begin(&w);
    jw_kstr(&w, "name", d->chip->name);
    jw_kstr(&w, "family", family_name(d->chip->family));
    jw_khex(&w, "pmc_boot_0", d->boot0, 8);
    jw_khex(&w, "pmc_boot_42", d->boot42, 8);
    jw_kstr(&w, "boot", d->chip->fsp_boot ? "fsp" : "fwsec-booter");
    jw_kint(&w, "mmu_version", d->chip->mmu_ver);
    jw_kuint(&w, "vram_size", d->vram_size);
    jw_kuint(&w, "bar1_size", d->bar1_size);
    jw_kbool(&w, "warm_reset", d->warm);
    jw_kstr(&w, "firmware_dir", d->fw.dir);
    jw_obj_end(&w);
  } else {
    jw_null(&w);
  }
  jw_key(&w, "steps");
  jw_arr_begin(&w);
  for (unsigned i = 0; d && i < d->nsteps; i++) {
    const bg_nv_boot_step *st = &d->steps[i];
    jw_obj_begin(&w);
    jw_kstr(&w, "name", st->name);
    jw_kuint(&w, "us", (st->ns + 500) / 1000);
    jw_kuint(&w, "register_reads", st->reg_reads);
    jw_kuint(&w, "register_writes", st->reg_writes);
    jw_kuint(&w, "rpcs", st->rpcs);
    jw_obj_end(&w);
  }
  jw_arr_end(&w);
  jw_kuint(&w, "total_us", (uint64_t)(ms * 1000.0 + 0.5));
  jw_key(&w, "register_reads");
  if (d) jw_uint(&w, d->reg_reads);
  else jw_null(&w);
  jw_key(&w, "register_writes");
  if (d) jw_uint(&w, d->reg_writes);
  else jw_null(&w);
  jw_key(&w, "rpcs");
  if (d) jw_uint(&w, total_rpcs(d));
  else jw_null(&w);
  jw_obj_end(&w);
  jw_finish(&w);
}

int bringup_nv_run(const char *bdf, const char *fw_dir, bool json, FILE *f, char *err, size_t errlen) {
  err[0] = 0;
  uint64_t t0 = bg_now_ns();
  bg_pci_dev *pci = NULL;
  bg_nv_pci *d = NULL;
  int e = bg_pci_open_sysfs(bdf, 0, &pci);
  if (e >= 0) e = bg_nv_pci_open(pci, fw_dir, &d);
  double ms = (double)(bg_now_ns() - t0) / 1e6;
  if (e < 0) snprintf(err, errlen, "%s", bg_last_error());
  if (json) print_json(bdf, d, ms, e < 0 ? err : NULL, f);
  else print_text(bdf, d, ms, e < 0 ? err : NULL, f);
  bg_nv_pci_close(d);
  bg_pci_close(pci);
  return e < 0 ? e : 0;
}
