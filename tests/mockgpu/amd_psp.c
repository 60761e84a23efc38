/* tests/mockgpu/amd_psp.c: the emulated PSP (tinygrad tinygrad/runtime/support/am/ip.py AM_PSP): the sOS bootloader on C2PMSG_35/36/81 and
 * the KM ring on C2PMSG_64/67/69/70/71 with psp_gfx_cmd_resp commands (Linux psp_gfx_if.h layouts).
 * Strict: every rule of tests/mockgpu/README.md "PSP" is checked; a violation is recorded with
 * amd_fail and the command is refused (bootloader: never acknowledged; ring: nonzero resp.status). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mock_shm.h"
#include "amd_internal.h"

/* bootloader commands (C2PMSG_35) */
#define BL_SYSDRV 0x10000u
#define BL_SOSDRV 0x20000u
#define BL_KDB 0x80000u
#define BL_SOCDRV 0xB0000u
#define BL_DBGDRV 0xC0000u
#define BL_INTFDRV 0xD0000u
#define BL_RASDRV 0xE0000u
#define BL_SPL 0x10000000u
#define BL_READY 0x80000000u

/* ring control (C2PMSG_64) and ring commands (psp_gfx_cmd_resp.cmd_id) */
#define RING_KM_CREATE 0x20000u  /* PSP_RING_TYPE__KM (2) << 16 */
#define RING_DESTROY 0x30000u    /* GFX_CTRL_CMD_ID_DESTROY_RINGS */
#define RING_SIZE 0x10000u
#define CMD_SETUP_TMR 0x5u
#define CMD_LOAD_IP_FW 0x6u
#define CMD_LOAD_TOC 0x20u
#define CMD_AUTOLOAD_RLC 0x21u
#define CMD_SPATIAL_PART 0x27u

/* psp_gfx_cmd_resp (1024 bytes) and psp_gfx_rb_frame (64 bytes) offsets */
#define CMD_BYTES 1024u
#define CMD_ID_OFF 8u
#define CMD_UNION_OFF 28u
#define RESP_STATUS_OFF 864u
#define RESP_TMR_SIZE_OFF 880u
#define FRAME_BYTES 64u

static uint32_t rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static const char *bl_name(uint32_t cmd) {
  switch (cmd) {
  case BL_SYSDRV: return "LOAD_SYSDRV";
  case BL_SOSDRV: return "LOAD_SOSDRV";
  case BL_KDB: return "LOAD_KEY_DATABASE";
  case BL_SOCDRV: return "LOAD_SOCDRV";
  case BL_DBGDRV: return "LOAD_DBGDRV";
  case BL_INTFDRV: return "LOAD_INTFDRV";
  case BL_RASDRV: return "LOAD_RASDRV";
  case BL_SPL: return "LOAD_TOS_SPL_TABLE";
  default: return "unknown";
  }
}

static const char *cmd_name(uint32_t id) {
  switch (id) {
  case CMD_SETUP_TMR: return "SETUP_TMR";
  case CMD_LOAD_IP_FW: return "LOAD_IP_FW";
  case CMD_LOAD_TOC: return "LOAD_TOC";
  case CMD_AUTOLOAD_RLC: return "AUTOLOAD_RLC";
  case CMD_SPATIAL_PART: return "SRIOV_SPATIAL_PART";
  default: return "unknown";
  }
}

static void record(mock_amd *g, const mock_amd_psp_cmd *c) {
  if (g->ncmds == g->capcmds) {
    size_t cap = g->capcmds ? g->capcmds * 2 : 32;
    mock_amd_psp_cmd *n = mock_shm_realloc(g->cmds, cap * sizeof(*n));
    if (!n) return;
    g->cmds = n;
    g->capcmds = cap;
  }
  g->cmds[g->ncmds++] = *c;
}

static const bg_fw_image *sos_image(const mock_amd *g) {
  return g->fw[BG_AM_FW_SOS].present ? &g->fw[BG_AM_FW_SOS].img : NULL;
}

static const bg_fw_desc *sos_comp(const mock_amd *g, uint32_t type) {
  const bg_fw_image *s = sos_image(g);
  return s ? bg_fw_find(s, BG_FW_SPACE_PSP, type) : NULL;
}

/* The bootloader sequence for this chip: (command, sOS component) in the documented order, each
 * only if the component exists in the installed sOS image (tinygrad tinygrad/runtime/support/am/ip.py AM_PSP init_hw step 1). */
static size_t bl_sequence(const mock_amd *g, uint32_t cmds[8], uint32_t types[8]) {
  const uint32_t c[8] = {BL_KDB, BL_SPL, BL_SYSDRV, BL_SOCDRV, BL_INTFDRV, BL_DBGDRV, BL_RASDRV, BL_SOSDRV};
  const uint32_t t[8] = {BG_PSP_FW_KDB, g->ip.mp0.maj >= 14 ? BG_PSP_FW_SPL : BG_PSP_FW_KDB, BG_PSP_FW_SYS_DRV,
                         BG_PSP_FW_SOC_DRV, BG_PSP_FW_INTF_DRV, BG_PSP_FW_DBG_DRV, BG_PSP_FW_RAS_DRV, BG_PSP_FW_SOS};
  size_t n = 0;
  for (int i = 0; i < 8; i++)
    if (sos_comp(g, t[i])) cmds[n] = c[i], types[n] = t[i], n++;
  return n;
}

static bool known_bl_cmd(uint32_t v) {
  return v == BL_SYSDRV || v == BL_SOSDRV || v == BL_KDB || v == BL_SOCDRV || v == BL_DBGDRV || v == BL_INTFDRV ||
         v == BL_RASDRV || v == BL_SPL;
}

/* Index of the first byte where [p, p+n) and the component differ, or -1. */
static long first_diff(const uint8_t *p, const bg_fw_desc *d) {
  for (size_t i = 0; i < d->size; i++)
    if (p[i] != d->data[i]) return (long)i;
  return -1;
}

static void bootloader_cmd(mock_amd *g, uint32_t cmd) {
  mock_amd_psp_cmd rec = {.ring = false, .cmd = cmd, .status = MOCK_PSP_STATUS_ORDER};
  bool staged = g->staged;
  g->staged = false;
  uint64_t pa = (uint64_t)amd_get(g, g->r.psp_36) << 20; /* MC address >> 20; MC base 0 */
  rec.addr = pa;
  uint32_t cmds[8], types[8];
  size_t n = bl_sequence(g, cmds, types);
  if (g->sos_alive) {
    amd_fail(g, "PSP bootloader: %s (0x%x) while sOS is running", bl_name(cmd), cmd);
  } else if (g->bl_hung) {
    amd_fail(g, "PSP bootloader: %s (0x%x) after a refused command (the bootloader is stuck)", bl_name(cmd), cmd);
  } else if (!known_bl_cmd(cmd)) {
    amd_fail(g, "PSP bootloader: unknown command 0x%x", cmd);
    rec.status = MOCK_PSP_STATUS_UNKNOWN;
  } else if (!sos_image(g)) {
    amd_fail(g, "PSP bootloader: %s but no sOS firmware is installed in the mock", bl_name(cmd));
  } else if (!staged) {
    amd_fail(g, "PSP bootloader: %s (0x%x) without a staging address written to C2PMSG_36 first", bl_name(cmd), cmd);
  } else if (g->bl_next >= n || cmds[g->bl_next] != cmd) {
    if (g->bl_next >= n)
      amd_fail(g, "PSP bootloader: %s out of order: all %zu components were already loaded", bl_name(cmd), n);
    else
      amd_fail(g, "PSP bootloader: %s out of order: expected %s (component %u of %zu)", bl_name(cmd),
               bl_name(cmds[g->bl_next]), g->bl_next + 1, n);
  } else {
    const bg_fw_desc *d = sos_comp(g, types[g->bl_next]);
    const uint8_t *p = amd_vram_at(g, pa, d->size);
    rec.fw_type = types[g->bl_next];
    rec.size = (uint32_t)d->size;
    long k = p ? first_diff(p, d) : 0;
    if (!p) {
      amd_fail(g, "PSP bootloader: %s: staging address 0x%" PRIx64 " + %zu bytes is outside VRAM", bl_name(cmd), pa,
               d->size);
      rec.status = MOCK_PSP_STATUS_PARAM;
    } else if (k >= 0) {
      amd_fail(g, "PSP bootloader: %s: the %zu bytes staged at 0x%" PRIx64 " are not the sOS %s component "
               "(first difference at byte %ld)", bl_name(cmd), d->size, pa, d->name, k);
      rec.status = MOCK_PSP_STATUS_FW;
    } else {
      rec.status = MOCK_PSP_STATUS_OK;
      g->bl_next++;
      if (cmd == BL_SOSDRV) g->sos_alive = true;
    }
  }
  if (rec.status != MOCK_PSP_STATUS_OK) g->bl_hung = true;
  record(g, &rec);
}

static bool fw_bit(const mock_amd *g, uint32_t t) { return t < 256 && (g->loaded[t / 8] >> (t % 8) & 1); }

bool mock_amd_fw_loaded(const mock_amd *g, uint32_t t) { return fw_bit(g, t); }

/* SETUP_TMR policy (tinygrad tinygrad/runtime/support/am/ip.py AM_PSP step 5): issued iff !boot_time_tmr || !autoload_tmr. */
static bool boot_time_tmr(const mock_amd *g) {
  bg_am_ipver v = g->ip.mp0;
  return (v.maj == 13 && v.min == 0 && (v.rev == 6 || v.rev == 14)) || (v.maj == 14 && v.min == 0 && (v.rev == 2 || v.rev == 3));
}
static bool autoload_tmr(const mock_amd *g) {
  bg_am_ipver v = g->ip.mp0;
  return !(v.maj == 13 && v.min == 0 && (v.rev == 6 || v.rev == 14));
}
static bool needs_setup_tmr(const mock_amd *g) { return !boot_time_tmr(g) || !autoload_tmr(g); }

/* Does [p, p+size) equal a component of type t of the installed firmware? */
static bool fw_matches(const mock_amd *g, uint32_t t, const uint8_t *p, uint32_t size, bool *known) {
  *known = false;
  for (int f = 0; f < BG_AM_FW_NFILES; f++) {
    if (!g->fw[f].present) continue;
    const bg_fw_image *img = &g->fw[f].img;
    for (int i = 0; i < img->ndescs; i++) {
      const bg_fw_desc *d = &img->descs[i];
      /* SDMA v1 (SDMA 4.4.x): one image loaded as SDMA0, SDMA1, SDMA2 and SDMA3 (tinygrad tinygrad/runtime/support/am/amdev.py AMFirmware item 3) */
      bool sdma_alias = f == BG_AM_FW_SDMA && d->space == BG_FW_SPACE_GFX && d->fw_type == BG_GFX_FW_SDMA0 &&
                        (t == BG_GFX_FW_SDMA1 || t == BG_GFX_FW_SDMA2 || t == BG_GFX_FW_SDMA3);
      bool same = (d->space == BG_FW_SPACE_GFX && d->fw_type == t) || sdma_alias ||
                  (t == BG_GFX_FW_REG_LIST && f == BG_AM_FW_SOS && d->space == BG_FW_SPACE_PSP &&
                   d->fw_type == BG_PSP_FW_RL && !(d->flags & BG_FW_DESC_AUX));
      if (!same) continue;
      *known = true;
      if (d->size == size && (size == 0 || memcmp(p, d->data, size) == 0)) return true;
    }
  }
  return false;
}

static uint32_t cmd_setup_tmr(mock_amd *g, const uint8_t *u, mock_amd_psp_cmd *rec) {
  uint64_t addr = (uint64_t)rd32(u + 4) << 32 | rd32(u);
  uint32_t size = rd32(u + 8), flags = rd32(u + 12);
  rec->addr = addr, rec->size = size;
  if (!needs_setup_tmr(g)) {
    amd_fail(g, "PSP SETUP_TMR on MP0 %u.%u.%u, whose TMR is set up by the bootloader", g->ip.mp0.maj, g->ip.mp0.min,
             g->ip.mp0.rev);
    return MOCK_PSP_STATUS_ORDER;
  }
  if (g->tmr_set) {
    amd_fail(g, "PSP SETUP_TMR issued twice");
    return MOCK_PSP_STATUS_ORDER;
  }
  if (sos_comp(g, BG_PSP_FW_TOC) && !g->toc_loaded) {
    amd_fail(g, "PSP SETUP_TMR before LOAD_TOC (the TOC sizes the TMR)");
    return MOCK_PSP_STATUS_ORDER;
  }
  if (g->ip.gc.maj >= 11 && g->fw[BG_AM_FW_SMU].present && !fw_bit(g, BG_GFX_FW_SMU)) {
    amd_fail(g, "PSP SETUP_TMR before the SMU firmware was loaded (SMU fw must be loaded before the TMR)");
    return MOCK_PSP_STATUS_ORDER;
  }
  if (!(flags & 2u)) {
    amd_fail(g, "PSP SETUP_TMR without tmr_flags.virt_phy_addr (flags 0x%x)", flags);
    return MOCK_PSP_STATUS_PARAM;
  }
  if (boot_time_tmr(g)) { /* 13.0.6/13.0.14: no driver TMR, all zeros */
    if (addr || size) {
      amd_fail(g, "PSP SETUP_TMR with a buffer (0x%" PRIx64 ", 0x%x) on a chip whose TMR is set up at boot", addr, size);
      return MOCK_PSP_STATUS_PARAM;
    }
  } else {
    uint32_t need = g->toc_loaded ? MOCK_PSP_TOC_TMR_SIZE : 1;
    if ((addr & 0xfffff) || size < need || !amd_vram_at(g, addr, size)) {
      amd_fail(g, "PSP SETUP_TMR: buffer 0x%" PRIx64 " size 0x%x must be 1 MiB aligned, inside VRAM and at least "
               "0x%x bytes", addr, size, need);
      return MOCK_PSP_STATUS_PARAM;
    }
  }
  g->tmr_set = true;
  return MOCK_PSP_STATUS_OK;
}

static uint32_t cmd_load_ip_fw(mock_amd *g, const uint8_t *u, mock_amd_psp_cmd *rec) {
  uint64_t addr = (uint64_t)rd32(u + 4) << 32 | rd32(u);
  uint32_t size = rd32(u + 8), type = rd32(u + 12);
  rec->addr = addr, rec->size = size, rec->fw_type = type;
  const char *tn = bg_fw_type_name(BG_FW_SPACE_GFX, type);
  if (sos_comp(g, BG_PSP_FW_TOC) && !g->toc_loaded) {
    amd_fail(g, "PSP LOAD_IP_FW %s (%u) before LOAD_TOC", tn, type);
    return MOCK_PSP_STATUS_ORDER;
  }
  if (needs_setup_tmr(g)) {
    if (type == BG_GFX_FW_SMU && g->tmr_set) {
      amd_fail(g, "PSP LOAD_IP_FW SMU after SETUP_TMR (SMU fw must be loaded before the TMR)");
      return MOCK_PSP_STATUS_ORDER;
    }
    if (type != BG_GFX_FW_SMU && !g->tmr_set) {
      amd_fail(g, "PSP LOAD_IP_FW %s (%u) before SETUP_TMR", tn, type);
      return MOCK_PSP_STATUS_ORDER;
    }
  }
  const uint8_t *p = amd_vram_at(g, addr, size);
  if (!p) {
    amd_fail(g, "PSP LOAD_IP_FW %s: 0x%" PRIx64 " + 0x%x is outside VRAM", tn, addr, size);
    return MOCK_PSP_STATUS_PARAM;
  }
  bool known;
  if (!fw_matches(g, type, p, size, &known)) {
    if (!known)
      amd_fail(g, "PSP LOAD_IP_FW type %u (%s): no installed firmware has a component of that type", type, tn);
    else
      amd_fail(g, "PSP LOAD_IP_FW %s: the 0x%x bytes at 0x%" PRIx64 " are not a component of the installed firmware",
               tn, size, addr);
    return MOCK_PSP_STATUS_FW;
  }
  g->loaded[type / 8] |= (uint8_t)(1u << (type % 8));
  return MOCK_PSP_STATUS_OK;
}

static uint32_t cmd_load_toc(mock_amd *g, const uint8_t *u, uint8_t *cmdbuf, mock_amd_psp_cmd *rec) {
  uint64_t addr = (uint64_t)rd32(u + 4) << 32 | rd32(u);
  uint32_t size = rd32(u + 8);
  rec->addr = addr, rec->size = size;
  const bg_fw_desc *toc = sos_comp(g, BG_PSP_FW_TOC);
  if (!toc) {
    amd_fail(g, "PSP LOAD_TOC but the installed sOS has no TOC component");
    return MOCK_PSP_STATUS_ORDER;
  }
  if (g->toc_loaded || g->tmr_set) {
    amd_fail(g, "PSP LOAD_TOC %s", g->toc_loaded ? "issued twice" : "after SETUP_TMR");
    return MOCK_PSP_STATUS_ORDER;
  }
  for (int t = 0; t < 256; t++)
    if (fw_bit(g, (uint32_t)t)) {
      amd_fail(g, "PSP LOAD_TOC after LOAD_IP_FW (%s was loaded first)", bg_fw_type_name(BG_FW_SPACE_GFX, (uint32_t)t));
      return MOCK_PSP_STATUS_ORDER;
    }
  const uint8_t *p = amd_vram_at(g, addr, size);
  if (!p || size != toc->size || memcmp(p, toc->data, size) != 0) {
    amd_fail(g, "PSP LOAD_TOC: the 0x%x bytes at 0x%" PRIx64 " are not the sOS TOC (0x%zx bytes)", size, addr, toc->size);
    return p ? MOCK_PSP_STATUS_FW : MOCK_PSP_STATUS_PARAM;
  }
  g->toc_loaded = true;
  wr32(cmdbuf + RESP_TMR_SIZE_OFF, MOCK_PSP_TOC_TMR_SIZE);
  return MOCK_PSP_STATUS_OK;
}

static uint32_t cmd_autoload(mock_amd *g) {
  if (g->ip.gc.maj < 11) {
    amd_fail(g, "PSP AUTOLOAD_RLC on GC %u.%u.%u (gfx9 loads the RLC with REG_LIST)", g->ip.gc.maj, g->ip.gc.min,
             g->ip.gc.rev);
    return MOCK_PSP_STATUS_ORDER;
  }
  if (g->autoloaded) {
    amd_fail(g, "PSP AUTOLOAD_RLC issued twice");
    return MOCK_PSP_STATUS_ORDER;
  }
  static const uint32_t req12[] = {BG_GFX_FW_SDMA_UCODE_TH0, BG_GFX_FW_RS64_PFP, BG_GFX_FW_RS64_ME, BG_GFX_FW_RS64_MEC,
                                   BG_GFX_FW_IMU_I, BG_GFX_FW_IMU_D, BG_GFX_FW_RLC_G};
  static const uint32_t req11[] = {BG_GFX_FW_SDMA_UCODE_TH0, BG_GFX_FW_RS64_MEC, BG_GFX_FW_IMU_I, BG_GFX_FW_IMU_D,
                                   BG_GFX_FW_RLC_G};
  const uint32_t *req = g->ip.gc.maj >= 12 ? req12 : req11;
  size_t n = g->ip.gc.maj >= 12 ? sizeof(req12) / sizeof(req12[0]) : sizeof(req11) / sizeof(req11[0]);
  char missing[256] = "";
  for (size_t i = 0; i < n; i++)
    if (!fw_bit(g, req[i])) {
      size_t l = strlen(missing);
      snprintf(missing + l, sizeof(missing) - l, "%s%s", l ? ", " : "", bg_fw_type_name(BG_FW_SPACE_GFX, req[i]));
    }
  if (missing[0]) {
    amd_fail(g, "PSP AUTOLOAD_RLC before all firmware was loaded: missing %s", missing);
    return MOCK_PSP_STATUS_ORDER;
  }
  g->autoloaded = true;
  amd_gmc_autoload_reset(g); /* the GC hub loses its state (amd_gmc.h) */
  return MOCK_PSP_STATUS_OK;
}

static void process_frame(mock_amd *g, uint64_t frame_pa) {
  mock_amd_psp_cmd rec = {.ring = true};
  const uint8_t *f = amd_vram_at(g, frame_pa, FRAME_BYTES);
  uint64_t cmd_mc = (uint64_t)rd32(f + 4) << 32 | rd32(f);
  uint64_t fence_mc = (uint64_t)rd32(f + 16) << 32 | rd32(f + 12);
  uint32_t fence_value = rd32(f + 20);
  uint8_t *cmd = amd_vram_at(g, cmd_mc, CMD_BYTES);
  uint8_t *fence = amd_vram_at(g, fence_mc, 4);
  bool reserved_zero = f[33] == 0;
  for (unsigned i = 34; i < FRAME_BYTES; i++) reserved_zero = reserved_zero && f[i] == 0;
  if (!cmd || (cmd_mc & 0xfff)) {
    amd_fail(g, "PSP ring frame at 0x%" PRIx64 ": command buffer 0x%" PRIx64 " is not a 4 KiB-aligned 1 KiB buffer "
             "in VRAM; frame not acknowledged", frame_pa, cmd_mc);
    rec.status = MOCK_PSP_STATUS_PARAM;
    record(g, &rec);
    return;
  }
  if (!fence || (fence_mc & 3)) {
    amd_fail(g, "PSP ring frame at 0x%" PRIx64 ": fence address 0x%" PRIx64 " is not an aligned VRAM address; frame "
             "not acknowledged", frame_pa, fence_mc);
    rec.status = MOCK_PSP_STATUS_PARAM;
    record(g, &rec);
    return;
  }
  uint32_t id = rd32(cmd + CMD_ID_OFF);
  const uint8_t *u = cmd + CMD_UNION_OFF;
  rec.cmd = id;
  uint32_t st;
  if (!reserved_zero) {
    amd_fail(g, "PSP ring frame at 0x%" PRIx64 ": frame_type/reserved bytes (33..63) must be 0", frame_pa);
    st = MOCK_PSP_STATUS_PARAM;
  } else {
    switch (id) {
    case CMD_LOAD_TOC: st = cmd_load_toc(g, u, cmd, &rec); break;
    case CMD_SETUP_TMR: st = cmd_setup_tmr(g, u, &rec); break;
    case CMD_LOAD_IP_FW: st = cmd_load_ip_fw(g, u, &rec); break;
    case CMD_AUTOLOAD_RLC: st = cmd_autoload(g); break;
    case CMD_SPATIAL_PART:
      if (__builtin_popcount(g->disc.ip[GC_HWIP].inst_mask) < 2 || rd32(u) != 1) { /* only multi-XCC parts, mode 1 (SPX) */
        amd_fail(g, "PSP SRIOV_SPATIAL_PART mode %u on a part without multiple XCCs or an unsupported mode", rd32(u));
        st = MOCK_PSP_STATUS_PARAM;
      } else {
        g->spatial = true;
        st = MOCK_PSP_STATUS_OK;
      }
      break;
    default:
      amd_fail(g, "PSP ring: unknown command id 0x%x (%s)", id, cmd_name(id));
      st = MOCK_PSP_STATUS_UNKNOWN;
      break;
    }
  }
  wr32(cmd + RESP_STATUS_OFF, st);
  wr32(fence, fence_value);
  rec.status = st;
  rec.fence = fence_value;
  record(g, &rec);
}

static void ring_wptr(mock_amd *g, uint32_t v) {
  if (!g->ring) {
    amd_fail(g, "PSP ring write pointer 0x%x written without a ring", v);
    return;
  }
  uint32_t ring_dw = g->ring_size / 4, delta = v - g->wptr;
  if (delta == 0 || delta % (FRAME_BYTES / 4) || delta > ring_dw) {
    amd_fail(g, "PSP ring write pointer 0x%x -> 0x%x: must advance by whole 16-dword frames within the ring", g->wptr, v);
    return;
  }
  for (uint32_t w = g->wptr; w != v; w += FRAME_BYTES / 4)
    process_frame(g, g->ring_addr + (uint64_t)w * 4 % g->ring_size);
  g->wptr = v;
}

static void ring_ctrl(mock_amd *g, uint32_t v) {
  if (!g->sos_alive) {
    amd_fail(g, "PSP ring control 0x%x before sOS is alive", v);
    return;
  }
  if (v == RING_KM_CREATE) {
    uint64_t addr = (uint64_t)amd_get(g, g->r.psp_70) << 32 | amd_get(g, g->r.psp_69);
    uint32_t size = amd_get(g, g->r.psp_71);
    if (g->ring) {
      amd_fail(g, "PSP ring create while a ring exists (destroy it first)");
      g->ring_resp = 0;
    } else if (size != RING_SIZE || (addr & 0xfff) || !amd_vram_at(g, addr, size)) {
      amd_fail(g, "PSP ring create: ring 0x%" PRIx64 " size 0x%x must be a 4 KiB-aligned 0x%x-byte VRAM buffer", addr,
               size, RING_SIZE);
      g->ring_resp = 0;
    } else {
      g->ring = true;
      g->ring_addr = addr;
      g->ring_size = size;
      g->wptr = 0;
      g->ring_resp = 0x80000000u;
    }
  } else if (v == RING_DESTROY) {
    if (!g->ring) {
      amd_fail(g, "PSP ring destroy without a ring");
      g->ring_resp = 0;
    } else {
      g->ring = false;
      g->wptr = 0;
      g->ring_resp = 0x80000000u;
    }
  } else {
    amd_fail(g, "PSP ring control: unknown command 0x%x (KM create 0x20000, destroy 0x30000)", v);
    g->ring_resp = 0;
  }
}

uint32_t amd_psp_read(mock_amd *g, int kind, uint32_t addr) {
  switch (kind) {
  case AMD_H_PSP_35: return g->bl_hung ? 0 : BL_READY;
  case AMD_H_PSP_64: return g->sos_alive ? g->ring_resp : 0;
  case AMD_H_PSP_67: return g->ring ? g->wptr : amd_get(g, addr);
  case AMD_H_PSP_81: {
    if (!g->sos_alive) return 0;
    const bg_fw_desc *d = sos_comp(g, BG_PSP_FW_SOS);
    return d && d->version ? d->version : 1;
  }
  default: return amd_get(g, addr);
  }
}

void amd_psp_write(mock_amd *g, int kind, uint32_t addr, uint32_t v) {
  switch (kind) {
  case AMD_H_PSP_35: bootloader_cmd(g, v); return;
  case AMD_H_PSP_36:
    amd_set(g, addr, v);
    g->staged = true;
    return;
  case AMD_H_PSP_64: ring_ctrl(g, v); return;
  case AMD_H_PSP_67: ring_wptr(g, v); return;
  case AMD_H_PSP_81: amd_fail(g, "write 0x%x to C2PMSG_81 (sOS status, written by the PSP only)", v); return;
  default: amd_set(g, addr, v); return;
  }
}

void amd_psp_reset(mock_amd *g) {
  g->sos_alive = g->bl_hung = g->staged = g->ring = g->toc_loaded = g->tmr_set = g->autoloaded = g->spatial = false;
  g->bl_next = 0;
  g->ring_resp = 0x80000000u;
  g->ring_addr = 0;
  g->ring_size = g->wptr = 0;
  memset(g->loaded, 0, sizeof(g->loaded));
}

void amd_psp_free(mock_amd *g) {
  mock_shm_free(g->cmds);
  g->cmds = NULL;
  g->ncmds = g->capcmds = 0;
}

bool mock_amd_sos_alive(const mock_amd *g) { return g->sos_alive; }
bool mock_amd_psp_ring(const mock_amd *g) { return g->ring; }
size_t mock_amd_psp_ncmds(const mock_amd *g) { return g->ncmds; }
const mock_amd_psp_cmd *mock_amd_psp_cmd_at(const mock_amd *g, size_t i) { return i < g->ncmds ? &g->cmds[i] : NULL; }
bool mock_amd_rlc_autoloaded(const mock_amd *g) { return g->autoloaded; }
bool mock_amd_tmr_set(const mock_amd *g) { return g->tmr_set; }
