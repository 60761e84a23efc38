/* usb/asm24_pcie.c: the PCIe hierarchy behind the bridge (tinygrad tinygrad/runtime/support/system.py System.pci_setup_usb_bars). */
#include <stdio.h>
#include <string.h>

#include "baregpu/error.h"
#include "platform/pci_regs.h"
#include "usb/asm24_internal.h"

/* Type-1 header registers the set-up programs (PCI-to-PCI bridge spec; Linux pci_regs.h names). */
enum {
  PCI_PRIMARY_BUS = 0x18,         /* dword: primary, secondary, subordinate, latency */
  PCI_MEMORY_BASE = 0x20, PCI_MEMORY_LIMIT = 0x22,
  PCI_PREF_MEMORY_BASE = 0x24, PCI_PREF_MEMORY_LIMIT = 0x26,
  PCI_PREF_BASE_UPPER32 = 0x28, PCI_PREF_LIMIT_UPPER32 = 0x2C,
};
#define CMD_IO_MEM_MASTER (BG_PCI_COMMAND_IO | BG_PCI_COMMAND_MEMORY | BG_PCI_COMMAND_MASTER)

static int setup_port(bg_asm24 *b, unsigned bus, unsigned gpu_bus, uint64_t mem_base, uint64_t pref_base) {
  int r;
#define W(reg, size, v) if ((r = bg_asm24_cfg_write(b, bus, 0, 0, reg, size, v)) < 0) return r
  /* Primary, secondary and subordinate in one write (tinygrad tinygrad/runtime/support/system.py System.pci_setup_usb_bars). */
  W(PCI_PRIMARY_BUS, 4, (bus + 1) << 8 | gpu_bus << 16);  /* primary 0 */
  W(PCI_MEMORY_BASE, 2, (uint32_t)(mem_base >> 16) & 0xffff);
  W(PCI_MEMORY_LIMIT, 2, 0xffff);
  W(PCI_PREF_MEMORY_BASE, 2, (uint32_t)(pref_base >> 16) & 0xffff);
  W(PCI_PREF_MEMORY_LIMIT, 2, 0xffff);
  W(PCI_PREF_BASE_UPPER32, 4, (uint32_t)(pref_base >> 32));
  W(PCI_PREF_LIMIT_UPPER32, 4, 0xffffffffu);
  W(BG_PCI_COMMAND, 1, CMD_IO_MEM_MASTER);
#undef W
  return 0;
}

/* Largest supported Resizable BAR size for the first BAR the capability lists. */
static int rebar_max(bg_asm24 *b, unsigned bus) {
  uint32_t pos = BG_PCI_EXT_CAP_START, hdr;
  for (int i = 0; i < 64 && pos >= BG_PCI_EXT_CAP_START; i++) {
    int r = bg_asm24_cfg_read(b, bus, 0, 0, pos, 4, &hdr);
    if (r < 0) return r;
    if (hdr == 0 || hdr == 0xffffffffu) return 0;
    if (BG_PCI_EXT_CAP_ID(hdr) == BG_PCI_EXT_CAP_ID_REBAR) {
      uint32_t cap, ctl;
      if ((r = bg_asm24_cfg_read(b, bus, 0, 0, pos + BG_PCI_REBAR_CAP, 4, &cap)) < 0 ||
          (r = bg_asm24_cfg_read(b, bus, 0, 0, pos + BG_PCI_REBAR_CTRL, 4, &ctl)) < 0)
        return r;
      uint32_t sizes = cap >> 4;
      if (!sizes) return 0;
      unsigned biggest = 31u - (unsigned)__builtin_clz(sizes);  /* bit_length - 1 */
      ctl = (ctl & ~BG_PCI_REBAR_CTRL_BAR_SIZE) | biggest << BG_PCI_REBAR_CTRL_BAR_SHIFT;
      return bg_asm24_cfg_write(b, bus, 0, 0, pos + BG_PCI_REBAR_CTRL, 4, ctl);
    }
    pos = BG_PCI_EXT_CAP_NEXT(hdr);
  }
  return 0;
}

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

static int setup_bars_locked(bg_asm24 *b, unsigned gpu_bus, uint64_t mem_base, uint64_t pref_base,
                             bg_asm24_bar bars[6]) {
  memset(bars, 0, 6 * sizeof(*bars));
  int r;
  for (unsigned bus = 0; bus < gpu_bus; bus++)
    if ((r = setup_port(b, bus, gpu_bus, mem_base, pref_base)) < 0)
      return bg_error_context(r, "%s: bridge port on bus %u: ", b->t->name, bus);
  if ((r = rebar_max(b, gpu_bus)) < 0) return bg_error_context(r, "%s: resizable BAR: ", b->t->name);
  uint64_t pool[2] = {mem_base, pref_base};
  for (unsigned i = 0; i < 6;) {
    unsigned reg = BG_PCI_BASE_ADDRESS_0 + 4 * i;
    uint32_t cfg, lo, hi = 0;
    if ((r = bg_asm24_cfg_read(b, gpu_bus, 0, 0, reg, 4, &cfg)) < 0) return r;
    bool is64 = (cfg & 6u) == BG_PCI_BASE_ADDRESS_MEM_TYPE_64;
    if (cfg & BG_PCI_BASE_ADDRESS_SPACE_IO) {
      i++;
      continue;
    }
    if ((r = bg_asm24_cfg_write(b, gpu_bus, 0, 0, reg, 4, 0xffffffffu)) < 0 ||
        (r = bg_asm24_cfg_read(b, gpu_bus, 0, 0, reg, 4, &lo)) < 0)
      return r;
    lo &= 0xfffffff0u;
    if (is64 && ((r = bg_asm24_cfg_write(b, gpu_bus, 0, 0, reg + 4, 4, 0xffffffffu)) < 0 ||
                 (r = bg_asm24_cfg_read(b, gpu_bus, 0, 0, reg + 4, 4, &hi)) < 0))
      return r;
    /* the writable address bits read back as ones: size = two's complement of them */
    uint64_t mask = (uint64_t)hi << 32 | lo;
    if (!is64) mask |= 0xffffffff00000000ull;
    uint64_t size = ~mask + 1;
    if (lo == 0 && hi == 0) size = 0;  /* not implemented */
    if (size) {
      bool pref = cfg & BG_PCI_BASE_ADDRESS_MEM_PREFETCH;
      uint64_t addr = round_up(pool[pref], size < BG_ASM24_BAR_ALIGN ? BG_ASM24_BAR_ALIGN : size);
      if ((r = bg_asm24_cfg_write(b, gpu_bus, 0, 0, reg, 4, (uint32_t)addr)) < 0) return r;
      if (is64 && (r = bg_asm24_cfg_write(b, gpu_bus, 0, 0, reg + 4, 4, (uint32_t)(addr >> 32))) < 0) return r;
      pool[pref] = addr + round_up(size, BG_ASM24_BAR_ALIGN);
      bars[i] = (bg_asm24_bar){addr, size, is64, pref};
    } else if ((r = bg_asm24_cfg_write(b, gpu_bus, 0, 0, reg, 4, 0)) < 0 ||
               (is64 && (r = bg_asm24_cfg_write(b, gpu_bus, 0, 0, reg + 4, 4, 0)) < 0)) {
      return r;
    }
    i += is64 ? 2 : 1;
  }
  return bg_asm24_cfg_write(b, gpu_bus, 0, 0, BG_PCI_COMMAND, 1, CMD_IO_MEM_MASTER);
}

/* One sequence of config requests: no other thread's request lands between a BAR sizing write and its read-back. */
int bg_asm24_setup_bars(bg_asm24 *b, unsigned gpu_bus, uint64_t mem_base, uint64_t pref_base, bg_asm24_bar bars[6]) {
  bg_asm24_lock(b);
  int r = setup_bars_locked(b, gpu_bus, mem_base, pref_base, bars);
  bg_asm24_unlock(b);
  return r;
}
