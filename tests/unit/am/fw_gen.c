/* tests/unit/am/fw_gen.c: correctly-headed firmware files with deterministic payloads (fw_gen.h). */
#include "fw_gen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "am/fw_headers.h"

#define OFF(T, f) offsetof(struct T, f)

uint32_t fw_gen_tag(uint32_t salt, bg_fw_space space, uint32_t fw_type, bool aux) {
  uint32_t t = (fw_type ^ (fw_type >> 16)) & 0x7ffu;
  return salt << 16 | (uint32_t)space << 12 | (aux ? 0x800u : 0u) | t;
}

uint32_t fw_gen_size(uint32_t tag) {
  uint32_t h = tag * 2654435761u;
  return 64u + ((h >> 20) % 48u) * 4u;
}

uint8_t fw_gen_byte(uint32_t tag, size_t i) {
  uint32_t x = tag * 0x9E3779B1u + (uint32_t)i * 0x01000193u;
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  return (uint8_t)(x >> 24);
}

bool fw_gen_check_as(uint32_t salt, bg_fw_space space, uint32_t fw_type, bool aux, const bg_fw_desc *d) {
  uint32_t tag = fw_gen_tag(salt, space, fw_type, aux);
  if (d->size != fw_gen_size(tag)) return false;
  for (size_t i = 0; i < d->size; i++)
    if (d->data[i] != fw_gen_byte(tag, i)) return false;
  return true;
}

bool fw_gen_check(const bg_fw_image *img, const bg_fw_desc *d) {
  return fw_gen_check_as(img->ucode_version, (bg_fw_space)d->space, d->fw_type, (d->flags & BG_FW_DESC_AUX) != 0, d);
}

/* ---- a growable image ----------------------------------------------------------------------------------------- */

typedef struct gbuf {
  uint8_t *b;
  size_t len, cap;
  uint32_t salt;
  bool oom;
} gbuf;

static void reserve(gbuf *g, size_t n) {
  if (n <= g->cap) return;
  size_t cap = g->cap ? g->cap : 1024;
  while (cap < n) cap *= 2;
  uint8_t *nb = realloc(g->b, cap);
  if (!nb) {
    g->oom = true;
    return;
  }
  memset(nb + g->cap, 0, cap - g->cap);
  g->b = nb;
  g->cap = cap;
}

static void put32(gbuf *g, size_t at, uint32_t v) {
  reserve(g, at + 4);
  if (g->oom) return;
  for (int i = 0; i < 4; i++) g->b[at + (size_t)i] = (uint8_t)(v >> (8 * i));
  if (g->len < at + 4) g->len = at + 4;
}

static void put16(gbuf *g, size_t at, uint16_t v) {
  reserve(g, at + 2);
  if (g->oom) return;
  g->b[at] = (uint8_t)v;
  g->b[at + 1] = (uint8_t)(v >> 8);
  if (g->len < at + 2) g->len = at + 2;
}

/* Append the component (space, type, aux) at the end; returns its offset, *size its size. */
static uint32_t part(gbuf *g, bg_fw_space space, uint32_t type, bool aux, uint32_t *size) {
  uint32_t tag = fw_gen_tag(g->salt, space, type, aux), n = fw_gen_size(tag);
  size_t at = g->len < FW_GEN_UCODE_OFFSET ? FW_GEN_UCODE_OFFSET : g->len;
  reserve(g, at + n);
  if (!g->oom) {
    for (uint32_t i = 0; i < n; i++) g->b[at + i] = fw_gen_byte(tag, i);
    g->len = at + n;
  }
  if (size) *size = n;
  return (uint32_t)at;
}

static uint32_t gfx_part(gbuf *g, uint32_t type, uint32_t *size) { return part(g, BG_FW_SPACE_GFX, type, false, size); }

/* A psp v1.x legacy descriptor for (type) appended now; offsets from the ucode array. */
static uint32_t legacy(gbuf *g, size_t at, uint32_t type, bool aux) {
  uint32_t size, off = part(g, BG_FW_SPACE_PSP, type, aux, &size) - FW_GEN_UCODE_OFFSET;
  put32(g, at, 0x100 + type);
  put32(g, at + 4, off);
  put32(g, at + 8, size);
  return size;
}

uint8_t *fw_gen_build(const fw_gen_spec *s, size_t *len) {
  gbuf g = {.salt = s->salt};
  size_t fixed = 0;
  uint32_t uo = FW_GEN_UCODE_OFFSET, usz = 0, size;
  reserve(&g, FW_GEN_UCODE_OFFSET);
  g.len = FW_GEN_UCODE_OFFSET;
  switch (s->family) {
  case BG_FW_PSP_SOS:
    if (s->major == 1) {
      fixed = s->minor == 0 ? sizeof(struct bg_fw_psp_v1_0) : s->minor == 3 ? sizeof(struct bg_fw_psp_v1_3)
                                                                            : sizeof(struct bg_fw_psp_v1_1);
      uint32_t sys;
      part(&g, BG_FW_SPACE_PSP, BG_PSP_FW_SYS_DRV, false, &sys);
      uint32_t sos = part(&g, BG_FW_SPACE_PSP, BG_PSP_FW_SOS, false, &size);
      put32(&g, OFF(bg_fw_psp_v1_0, sos), 0x51);
      put32(&g, OFF(bg_fw_psp_v1_0, sos) + 4, sos - uo);
      put32(&g, OFF(bg_fw_psp_v1_0, sos) + 8, size);
      if (s->minor == 1 || s->minor == 3) {
        legacy(&g, OFF(bg_fw_psp_v1_1, toc), BG_PSP_FW_TOC, false);
        legacy(&g, OFF(bg_fw_psp_v1_1, kdb), BG_PSP_FW_KDB, false);
      }
      if (s->minor == 2) legacy(&g, OFF(bg_fw_psp_v1_2, kdb), BG_PSP_FW_KDB, false);
      if (s->minor == 3) {
        legacy(&g, OFF(bg_fw_psp_v1_3, spl), BG_PSP_FW_SPL, false);
        legacy(&g, OFF(bg_fw_psp_v1_3, rl), BG_PSP_FW_RL, false);
        legacy(&g, OFF(bg_fw_psp_v1_3, sys_drv_aux), BG_PSP_FW_SYS_DRV, true);
        legacy(&g, OFF(bg_fw_psp_v1_3, sos_aux), BG_PSP_FW_SOS, true);
      }
      usz = (uint32_t)g.len - uo;
      break;
    }
    /* v2.x descriptors are laid out like ta v2.0 */
    /* fall through */
  case BG_FW_PSP_TA: {
    bool v21 = s->family == BG_FW_PSP_SOS && s->minor == 1;
    size_t at = v21 ? OFF(bg_fw_psp_v2_1, psp_fw_bin) : OFF(bg_fw_psp_v2_0, psp_fw_bin);
    fixed = at;
    put32(&g, OFF(bg_fw_psp_v2_0, psp_fw_bin_count), (uint32_t)s->ntypes);
    if (v21) put32(&g, OFF(bg_fw_psp_v2_1, psp_aux_fw_bin_index), s->aux_index);
    bg_fw_space sp = s->family == BG_FW_PSP_TA ? BG_FW_SPACE_TA : BG_FW_SPACE_PSP;
    for (int i = 0; i < s->ntypes; i++) {
      bool aux = v21 && s->aux_index && (uint32_t)i >= s->aux_index;
      uint32_t off = part(&g, sp, s->types[i], aux, &size) - uo;
      size_t d = at + (size_t)i * 16;
      put32(&g, d, s->types[i]);
      put32(&g, d + 4, 0x1000 + (uint32_t)i);
      put32(&g, d + 8, off);
      put32(&g, d + 12, size);
    }
    usz = (uint32_t)g.len - uo;
    break;
  }
  case BG_FW_PSP_TOC:
    fixed = sizeof(struct bg_fw_psp_v1_0);
    part(&g, BG_FW_SPACE_PSP, BG_PSP_FW_TOC, false, &usz);
    break;
  case BG_FW_SMC: {
    fixed = s->major == 1 ? sizeof(struct bg_fw_smc_v1_0) : sizeof(struct bg_fw_smc_v2_0);
    gfx_part(&g, BG_GFX_FW_SMU, &usz);
    put32(&g, OFF(bg_fw_smc_v1_0, ucode_start_addr), 0x20000);
    if (s->major == 2 && s->minor == 0) {
      uint32_t off = part(&g, BG_FW_SPACE_PPTABLE, 0, false, &size);
      put32(&g, OFF(bg_fw_smc_v2_0, ppt_offset_bytes), off);
      put32(&g, OFF(bg_fw_smc_v2_0, ppt_size_bytes), size);
    } else if (s->major == 2) {
      uint32_t offs[16], sizes[16];
      int n = s->ntypes < 16 ? s->ntypes : 16;
      for (int i = 0; i < n; i++) {
        bool p2s = s->types[i] == BG_FW_PPTABLE_ID_P2S;
        offs[i] = part(&g, p2s ? BG_FW_SPACE_GFX : BG_FW_SPACE_PPTABLE, p2s ? BG_GFX_FW_P2S_TABLE : s->types[i], false,
                       &sizes[i]);
      }
      uint32_t at = (uint32_t)g.len;
      put32(&g, OFF(bg_fw_smc_v2_1, pptable_count), (uint32_t)n);
      put32(&g, OFF(bg_fw_smc_v2_1, pptable_entry_offset), at);
      for (int i = 0; i < n; i++) {
        put32(&g, at + (uint32_t)i * 12, s->types[i]);
        put32(&g, at + (uint32_t)i * 12 + 4, offs[i]);
        put32(&g, at + (uint32_t)i * 12 + 8, sizes[i]);
      }
    }
    break;
  }
  case BG_FW_SDMA:
    put32(&g, OFF(bg_fw_sdma_v1_0, ucode_feature_version), 0x2c);
    if (s->major == 1) {
      fixed = s->minor == 0 ? sizeof(struct bg_fw_sdma_v1_0) : sizeof(struct bg_fw_sdma_v1_1);
      gfx_part(&g, BG_GFX_FW_SDMA0, &usz);
      put32(&g, OFF(bg_fw_sdma_v1_0, jt_offset), usz / 4 - 8);
      put32(&g, OFF(bg_fw_sdma_v1_0, jt_size), 8);
    } else if (s->major == 2) {
      fixed = sizeof(struct bg_fw_sdma_v2_0);
      uint32_t ctx, ctl;
      gfx_part(&g, BG_GFX_FW_SDMA_UCODE_TH0, &ctx);
      uint32_t ctl_off = gfx_part(&g, BG_GFX_FW_SDMA_UCODE_TH1, &ctl);
      put32(&g, OFF(bg_fw_sdma_v2_0, ctx_ucode_size_bytes), ctx);
      put32(&g, OFF(bg_fw_sdma_v2_0, ctl_ucode_offset), ctl_off);
      put32(&g, OFF(bg_fw_sdma_v2_0, ctl_ucode_size_bytes), ctl);
      usz = ctx + ctl;
    } else {
      fixed = sizeof(struct bg_fw_sdma_v3_0);
      gfx_part(&g, BG_GFX_FW_SDMA_UCODE_TH0, &usz);
      put32(&g, OFF(bg_fw_sdma_v3_0, ucode_offset_bytes), uo);
      put32(&g, OFF(bg_fw_sdma_v3_0, ucode_size_bytes), usz);
    }
    break;
  case BG_FW_GFX_PFP:
  case BG_FW_GFX_ME:
  case BG_FW_GFX_MEC: {
    int e = s->family - BG_FW_GFX_PFP;
    put32(&g, OFF(bg_fw_gfx_v1_0, ucode_feature_version), 0x2d);
    if (s->major == 1) {
      fixed = sizeof(struct bg_fw_gfx_v1_0);
      static const uint32_t t[] = {BG_GFX_FW_CP_PFP, BG_GFX_FW_CP_ME, BG_GFX_FW_CP_MEC};
      gfx_part(&g, t[e], &usz);
      if (s->family == BG_FW_GFX_MEC) {
        uint32_t jt;
        gfx_part(&g, BG_GFX_FW_CP_MEC_ME1, &jt);
        put32(&g, OFF(bg_fw_gfx_v1_0, jt_offset), usz / 4);
        put32(&g, OFF(bg_fw_gfx_v1_0, jt_size), jt / 4);
        usz += jt;
      }
    } else {
      fixed = sizeof(struct bg_fw_gfx_v2_0);
      static const uint32_t code[] = {BG_GFX_FW_RS64_PFP, BG_GFX_FW_RS64_ME, BG_GFX_FW_RS64_MEC};
      static const uint32_t stack[] = {BG_GFX_FW_RS64_PFP_P0_STACK, BG_GFX_FW_RS64_ME_P0_STACK,
                                       BG_GFX_FW_RS64_MEC_P0_STACK};
      gfx_part(&g, code[e], &usz);
      uint32_t doff = gfx_part(&g, stack[e], &size);
      put32(&g, OFF(bg_fw_gfx_v2_0, ucode_size_bytes), usz);
      put32(&g, OFF(bg_fw_gfx_v2_0, ucode_offset_bytes), uo);
      put32(&g, OFF(bg_fw_gfx_v2_0, data_size_bytes), size);
      put32(&g, OFF(bg_fw_gfx_v2_0, data_offset_bytes), doff);
      put32(&g, OFF(bg_fw_gfx_v2_0, ucode_start_addr_lo), 0x10000u * (uint32_t)(e + 1));
      put32(&g, OFF(bg_fw_gfx_v2_0, ucode_start_addr_hi), 0);
    }
    break;
  }
  case BG_FW_IMU: {
    fixed = sizeof(struct bg_fw_imu_v1_0);
    uint32_t isz, dsz;
    gfx_part(&g, BG_GFX_FW_IMU_I, &isz);
    gfx_part(&g, BG_GFX_FW_IMU_D, &dsz);
    put32(&g, OFF(bg_fw_imu_v1_0, imu_iram_ucode_size_bytes), isz);
    put32(&g, OFF(bg_fw_imu_v1_0, imu_iram_ucode_offset_bytes), 0);
    put32(&g, OFF(bg_fw_imu_v1_0, imu_dram_ucode_size_bytes), dsz);
    put32(&g, OFF(bg_fw_imu_v1_0, imu_dram_ucode_offset_bytes), isz);
    usz = isz + dsz;
    break;
  }
  case BG_FW_RLC: {
    static const size_t fx[] = {sizeof(struct bg_fw_rlc_v2_0), sizeof(struct bg_fw_rlc_v2_1),
                                sizeof(struct bg_fw_rlc_v2_2), sizeof(struct bg_fw_rlc_v2_3)};
    fixed = fx[s->minor & 3];
    put32(&g, OFF(bg_fw_rlc_v2_0, ucode_feature_version), 1);
    gfx_part(&g, BG_GFX_FW_RLC_G, &usz);
    struct { unsigned min_minor; uint32_t type; size_t size_at, off_at; } parts[] = {
      {1, BG_GFX_FW_RLC_RESTORE_LIST_SRM_CNTL, OFF(bg_fw_rlc_v2_1, save_restore_list_cntl_size_bytes),
       OFF(bg_fw_rlc_v2_1, save_restore_list_cntl_offset_bytes)},
      {1, BG_GFX_FW_RLC_RESTORE_LIST_GPM_MEM, OFF(bg_fw_rlc_v2_1, save_restore_list_gpm_size_bytes),
       OFF(bg_fw_rlc_v2_1, save_restore_list_gpm_offset_bytes)},
      {1, BG_GFX_FW_RLC_RESTORE_LIST_SRM_MEM, OFF(bg_fw_rlc_v2_1, save_restore_list_srm_size_bytes),
       OFF(bg_fw_rlc_v2_1, save_restore_list_srm_offset_bytes)},
      {2, BG_GFX_FW_RLC_IRAM, OFF(bg_fw_rlc_v2_2, rlc_iram_ucode_size_bytes),
       OFF(bg_fw_rlc_v2_2, rlc_iram_ucode_offset_bytes)},
      {2, BG_GFX_FW_RLC_DRAM_BOOT, OFF(bg_fw_rlc_v2_2, rlc_dram_ucode_size_bytes),
       OFF(bg_fw_rlc_v2_2, rlc_dram_ucode_offset_bytes)},
      {3, BG_GFX_FW_RLC_P, OFF(bg_fw_rlc_v2_3, rlcp_ucode_size_bytes), OFF(bg_fw_rlc_v2_3, rlcp_ucode_offset_bytes)},
      {3, BG_GFX_FW_RLC_V, OFF(bg_fw_rlc_v2_3, rlcv_ucode_size_bytes), OFF(bg_fw_rlc_v2_3, rlcv_ucode_offset_bytes)},
    };
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
      if (s->minor < parts[i].min_minor) continue;
      uint32_t off = gfx_part(&g, parts[i].type, &size);
      put32(&g, parts[i].size_at, size);
      put32(&g, parts[i].off_at, off);
    }
    break;
  }
  default: break;
  }
  if (!fixed || g.oom) {
    free(g.b);
    return NULL;
  }
  put32(&g, OFF(bg_fw_common_header, size_bytes), (uint32_t)g.len);
  put32(&g, OFF(bg_fw_common_header, header_size_bytes), (uint32_t)fixed);
  put16(&g, OFF(bg_fw_common_header, header_version_major), s->major);
  put16(&g, OFF(bg_fw_common_header, header_version_minor), s->minor);
  put16(&g, OFF(bg_fw_common_header, ip_version_major), s->ip_major);
  put16(&g, OFF(bg_fw_common_header, ip_version_minor), s->ip_minor);
  put32(&g, OFF(bg_fw_common_header, ucode_version), s->salt);
  put32(&g, OFF(bg_fw_common_header, ucode_size_bytes), usz);
  put32(&g, OFF(bg_fw_common_header, ucode_array_offset_bytes), uo);
  put32(&g, OFF(bg_fw_common_header, crc32), bg_fw_crc32(g.b + 32, g.len - 32));
  *len = g.len;
  return g.b;
}

/* ---- chips -------------------------------------------------------------------------------------------------- */

void fw_gen_chip_ips(fw_gen_chip_id chip, bg_am_fw_ips *ip) {
  switch (chip) {
  case FW_GEN_GFX12: *ip = (bg_am_fw_ips){{12, 0, 0}, {14, 0, 2}, {14, 0, 2}, {7, 0, 0}}; break;
  case FW_GEN_GFX942: *ip = (bg_am_fw_ips){{9, 4, 3}, {13, 0, 6}, {13, 0, 6}, {4, 4, 2}}; break;
  default: *ip = (bg_am_fw_ips){{11, 0, 0}, {13, 0, 0}, {13, 0, 0}, {6, 0, 0}}; break;
  }
}

static const uint32_t sos_gfx11[] = {BG_PSP_FW_KDB, BG_PSP_FW_SYS_DRV, BG_PSP_FW_SOC_DRV, BG_PSP_FW_INTF_DRV,
                                     BG_PSP_FW_DBG_DRV, BG_PSP_FW_RAS_DRV, BG_PSP_FW_SOS, BG_PSP_FW_TOC};
static const uint32_t sos_gfx12[] = {BG_PSP_FW_KDB, BG_PSP_FW_SPL, BG_PSP_FW_SYS_DRV, BG_PSP_FW_SOC_DRV,
                                     BG_PSP_FW_INTF_DRV, BG_PSP_FW_DBG_DRV, BG_PSP_FW_RAS_DRV, BG_PSP_FW_SOS,
                                     BG_PSP_FW_TOC};
static const uint32_t sos_gfx942[] = {BG_PSP_FW_SYS_DRV, BG_PSP_FW_SOS, BG_PSP_FW_KDB, BG_PSP_FW_RL, BG_PSP_FW_TOC,
                                      BG_PSP_FW_SYS_DRV, BG_PSP_FW_SOS, BG_PSP_FW_KDB, BG_PSP_FW_RL, BG_PSP_FW_TOC};
static const uint32_t ppt_gfx12[] = {0x94c, 0x98b};
static const uint32_t ppt_gfx942[] = {BG_FW_PPTABLE_ID_P2S, 0x11, BG_FW_PPTABLE_ID_P2S};

bool fw_gen_chip_spec(fw_gen_chip_id chip, bg_am_fw_file_id file, fw_gen_spec *s) {
  bg_am_fw_ips ip;
  fw_gen_chip_ips(chip, &ip);
  char name[64];
  if (!bg_am_fw_name(&ip, file, name, sizeof(name))) return false;
  memset(s, 0, sizeof(*s));
  s->salt = (uint32_t)chip * 16u + (uint32_t)file + 1u;
  bg_am_ipver v = file == BG_AM_FW_SOS ? ip.mp0 : file == BG_AM_FW_SMU ? ip.mp1 : file == BG_AM_FW_SDMA ? ip.sdma0 : ip.gc;
  s->ip_major = v.maj;
  s->ip_minor = v.min;
  switch (file) {
  case BG_AM_FW_SOS:
    s->family = BG_FW_PSP_SOS;
    s->major = 2;
    if (chip == FW_GEN_GFX11) {
      s->types = sos_gfx11;
      s->ntypes = (int)(sizeof(sos_gfx11) / sizeof(sos_gfx11[0]));
    } else if (chip == FW_GEN_GFX12) {
      s->minor = 1;
      s->types = sos_gfx12;
      s->ntypes = (int)(sizeof(sos_gfx12) / sizeof(sos_gfx12[0]));
    } else {
      s->minor = 1;
      s->types = sos_gfx942;
      s->ntypes = (int)(sizeof(sos_gfx942) / sizeof(sos_gfx942[0]));
      s->aux_index = 5;
    }
    break;
  case BG_AM_FW_SMU:
    s->family = BG_FW_SMC;
    s->major = 2;
    s->minor = chip == FW_GEN_GFX11 ? 0 : 1;
    if (chip == FW_GEN_GFX12) {
      s->types = ppt_gfx12;
      s->ntypes = 2;
    } else if (chip == FW_GEN_GFX942) {
      s->types = ppt_gfx942;
      s->ntypes = 3;
    }
    break;
  case BG_AM_FW_SDMA:
    s->family = BG_FW_SDMA;
    s->major = chip == FW_GEN_GFX11 ? 2 : chip == FW_GEN_GFX12 ? 3 : 1;
    break;
  case BG_AM_FW_PFP:
  case BG_AM_FW_ME:
  case BG_AM_FW_MEC:
    s->family = (bg_fw_family)(BG_FW_GFX_PFP + (file - BG_AM_FW_PFP));
    s->major = chip == FW_GEN_GFX942 ? 1 : 2;
    break;
  case BG_AM_FW_IMU:
    s->family = BG_FW_IMU;
    s->major = 1;
    break;
  case BG_AM_FW_RLC:
    s->family = BG_FW_RLC;
    s->major = 2;
    s->minor = chip == FW_GEN_GFX942 ? 1 : 3;
    break;
  default: return false;
  }
  return true;
}

int fw_gen_write(const char *dir, const char *name, const uint8_t *b, size_t n) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < n) {
    ssize_t w = write(fd, b + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = errno;
      close(fd);
      errno = e ? e : EIO;
      return -1;
    }
    done += (size_t)w;
  }
  return close(fd);
}

int fw_gen_chip(const char *dir, fw_gen_chip_id chip) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) return -1;
  bg_am_fw_ips ip;
  fw_gen_chip_ips(chip, &ip);
  for (int f = 0; f < BG_AM_FW_NFILES; f++) {
    fw_gen_spec s;
    char name[64];
    if (!fw_gen_chip_spec(chip, (bg_am_fw_file_id)f, &s)) continue;
    bg_am_fw_name(&ip, (bg_am_fw_file_id)f, name, sizeof(name));
    size_t n;
    uint8_t *b = fw_gen_build(&s, &n);
    if (!b) {
      errno = ENOMEM;
      return -1;
    }
    int r = fw_gen_write(dir, name, b, n);
    free(b);
    if (r != 0) return -1;
  }
  return 0;
}
