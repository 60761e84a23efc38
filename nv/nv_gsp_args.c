/* nv/nv_gsp_args.c: the structures handed to GSP-RM at boot, written field by field at their pinned offsets: the RM
 * arguments with the message-queue location, the LibOS memory regions, the radix-3 page tree of the GSP-RM image,
 * GspFwWprMeta, GspSystemInfo, the registry table, and for FSP chips GSP_FMC_BOOT_PARAMS, NVDM_PAYLOAD_COT and the
 * MCTP/NVDM message around it.
 *
 * Facts: tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT (570 offsets); Linux nouveau include/nvrm/535.113.01 (gsp_init_args.h,
 * libos_init_args.h, gsp_fw_wpr_meta.h) and nvkm/subdev/gsp/r535.c (r535_gsp_libos_init, nvkm_gsp_radix3_sg);
 * open-gpu-kernel-modules src/nvidia/arch/nvalloc/common/inc/gsp/gsp_fw_wpr_meta.h (field order, magic, revision),
 * src/nvidia/inc/kernel/gpu/fsp/kern_fsp_cot_payload.h (NVDM_PAYLOAD_COT) and
 * src/nvidia/src/kernel/gpu/fsp/kern_fsp.c (kfspSendMessage: the message is padded to whole dwords). tinygrad pads
 * 4 bytes even when the payload is dword-aligned (tinygrad tinygrad/runtime/support/nv/ip.py kfsp_send_msg); here the pad is 0..3 bytes. */
#include <string.h>

#include "baregpu/error.h"
#include "nv/nv_fw.h"
#include "nv/nv_gsp.h"
#include "nv/nv_gsp_priv.h"

#define PAGE 0x1000ull
#define MiB (1ull << 20)

/* ---- GSP_ARGUMENTS_CACHED / MESSAGE_QUEUE_INIT_ARGUMENTS (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw) ---- */
enum {
  MQ_SHARED_MEM = 0, MQ_PTE_COUNT = 8, MQ_CMD_OFFSET = 16, MQ_STAT_OFFSET = 24,
  ARGS_DMEM_STACK = 48, /* GSP_ARGUMENTS_CACHED.bDmemStack (570) */
};

int bg_nv_gsp_rm_args(uint8_t *buf, size_t cap, const bg_nv_msgq *q) {
  if (!buf || cap < PAGE) return bg_error(BG_EINVAL, "GSP RM arguments: buffer of %zu bytes, expected 0x1000", cap);
  if (!q || !q->base) return bg_error(BG_EINVAL, "GSP RM arguments: message queues not initialized");
  memset(buf, 0, PAGE);
  bg_gsp_wr64(buf + MQ_SHARED_MEM, q->bus0);
  bg_gsp_wr32(buf + MQ_PTE_COUNT, q->pte_count);
  bg_gsp_wr64(buf + MQ_CMD_OFFSET, BG_NV_MSGQ_CMD_OFFSET);
  bg_gsp_wr64(buf + MQ_STAT_OFFSET, BG_NV_MSGQ_STAT_OFFSET);
  buf[ARGS_DMEM_STACK] = 1;
  return 0;
}

/* ---- LibosMemoryRegionInitArgument (libos_init_args.h: 32 B) ---- */
enum { LIBOS_ID8 = 0, LIBOS_PA = 8, LIBOS_SIZE = 16, LIBOS_KIND = 24, LIBOS_LOC = 25, LIBOS_ENTRY = 32 };
#define LIBOS_KIND_CONTIGUOUS 1u
#define LIBOS_LOC_SYSMEM 1u

/* The name as a big-endian integer: "LOGRM" = 0x4c4f47524d (r535.c r535_gsp_libos_id8). */
static uint64_t id8(const char *name) {
  uint64_t v = 0;
  for (const char *p = name; *p; p++) v = (v << 8) | (uint8_t)*p;
  return v;
}

int bg_nv_libos_args(uint8_t *buf, size_t cap, uint64_t log_bus, uint64_t rmargs_bus) {
  static const char *logs[] = {"LOGINIT", "LOGINTR", "LOGRM", "LOGMNOC", "LOGKRNL"};
  if (!buf || cap < BG_NV_LIBOS_ARGS_SIZE)
    return bg_error(BG_EINVAL, "GSP LibOS arguments: buffer of %zu bytes, expected 0x%x", cap, BG_NV_LIBOS_ARGS_SIZE);
  memset(buf, 0, BG_NV_LIBOS_ARGS_SIZE);
  for (unsigned i = 0; i <= 5; i++) {
    uint8_t *e = buf + LIBOS_ENTRY * i;
    bg_gsp_wr64(e + LIBOS_ID8, id8(i < 5 ? logs[i] : "RMARGS"));
    bg_gsp_wr64(e + LIBOS_PA, i < 5 ? log_bus + (uint64_t)i * BG_NV_LIBOS_LOG_SIZE : rmargs_bus);
    bg_gsp_wr64(e + LIBOS_SIZE, i < 5 ? BG_NV_LIBOS_LOG_SIZE : PAGE);
    e[LIBOS_KIND] = LIBOS_KIND_CONTIGUOUS;
    e[LIBOS_LOC] = LIBOS_LOC_SYSMEM;
  }
  return 0;
}

/* ---- radix-3 page tree (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw; nouveau nvkm_gsp_radix3_sg) ---- */
#define RADIX_ENTRIES 512u /* u64 addresses per 4 KiB page */

static void radix3_levels(uint64_t len, uint64_t n[4]) {
  n[3] = (len + PAGE - 1) / PAGE;
  if (!n[3]) n[3] = 1;
  n[2] = (n[3] - 1) / RADIX_ENTRIES + 1;
  n[1] = (n[2] - 1) / RADIX_ENTRIES + 1;
  n[0] = (n[1] - 1) / RADIX_ENTRIES + 1;
}

uint64_t bg_nv_radix3_table_pages(uint64_t len) {
  uint64_t n[4];
  radix3_levels(len, n);
  return n[0] + n[1] + n[2];
}

int bg_nv_radix3_build(uint8_t *buf, size_t cap, const uint64_t *bus, size_t npages, const uint8_t *image, size_t len) {
  if (!buf || !bus || !image || !len) return bg_error(BG_EINVAL, "GSP radix3: NULL buffer, page list or empty image");
  uint64_t n[4];
  radix3_levels(len, n);
  uint64_t tables = n[0] + n[1] + n[2], pages = tables + n[3];
  if (npages != pages)
    return bg_error(BG_EINVAL, "GSP radix3: %zu bus addresses, expected %llu (%llu table pages + %llu image pages)",
                    npages, (unsigned long long)pages, (unsigned long long)tables, (unsigned long long)n[3]);
  if (cap < tables * PAGE + len)
    return bg_error(BG_EINVAL, "GSP radix3: buffer of %zu bytes, expected 0x%llx (tables + image)", cap,
                    (unsigned long long)(tables * PAGE + len));
  for (size_t i = 0; i < npages; i++)
    if (bus[i] & (PAGE - 1))
      return bg_error(BG_EINVAL, "GSP radix3: bus address of page %zu (0x%llx) is not 4 KiB aligned", i,
                      (unsigned long long)bus[i]);
  memset(buf, 0, tables * PAGE);
  /* Level i's entries (consecutive over its pages) are the bus addresses of level i+1's pages; level 2 points at the
   * image pages. */
  uint64_t first = 0;
  for (int lvl = 0; lvl < 3; lvl++) {
    uint64_t next = first + n[lvl];
    for (uint64_t j = 0; j < n[lvl + 1]; j++) bg_gsp_wr64(buf + first * PAGE + 8 * j, bus[next + j]);
    first = next;
  }
  memcpy(buf + tables * PAGE, image, len);
  return 0;
}

/* ---- GspFwWprMeta (gsp_fw_wpr_meta.h; 570 offsets, tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw) ---- */
enum {
  WPR_MAGIC = 0, WPR_REVISION = 8, WPR_RADIX3_ADDR = 16, WPR_RADIX3_SIZE = 24, WPR_BL_ADDR = 32, WPR_BL_SIZE = 40,
  WPR_BL_CODE_OFF = 48, WPR_BL_DATA_OFF = 56, WPR_BL_MANIFEST_OFF = 64, WPR_SIG_ADDR = 72, WPR_SIG_SIZE = 80,
  WPR_RSVD_START = 88, WPR_NONWPR_HEAP_OFF = 96, WPR_NONWPR_HEAP_SIZE = 104, WPR_START = 112, WPR_HEAP_OFF = 120,
  WPR_HEAP_SIZE = 128, WPR_FW_OFF = 136, WPR_BOOT_BIN_OFF = 144, WPR_FRTS_OFF = 152, WPR_FRTS_SIZE = 160,
  WPR_END = 168, WPR_FB_SIZE = 176, WPR_VGA_OFF = 184, WPR_VGA_SIZE = 192, WPR_PMU_RESERVED = 244,
};
_Static_assert(WPR_PMU_RESERVED + 4 <= BG_NV_WPR_META_SIZE, "GspFwWprMeta is 256 bytes");
#define WPR_META_MAGIC 0xdc3aae21371a60b3ull
#define WPR_META_REVISION 1u
#define WPR_SIGNATURE_SIZE 0x1000u
/* Non-FSP layout sizes (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw) */
#define VGA_SIZE MiB
#define FRTS_SIZE MiB
#define GSP_HEAP_SIZE 0x8100000ull
#define NONWPR_HEAP_SIZE MiB
/* FSP chips: sizes only, the FMC places them (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw) */
#define FSP_VGA_SIZE 0x20000ull
#define FSP_PMU_RESERVED 0x1820000u
#define FSP_NONWPR_HEAP_SIZE 0x220000ull
#define FSP_GSP_HEAP_SIZE 0x8700000ull

static uint64_t down(uint64_t v, uint64_t a) { return v / a * a; }

int bg_nv_wpr_meta(uint8_t *buf, size_t cap, const bg_nv_wpr_in *in) {
  if (!buf || cap < BG_NV_WPR_META_SIZE)
    return bg_error(BG_EINVAL, "GSP WPR metadata: buffer of %zu bytes, expected %u", cap, BG_NV_WPR_META_SIZE);
  if (!in || !in->chip) return bg_error(BG_EINVAL, "GSP WPR metadata: no chip");
  memset(buf, 0, BG_NV_WPR_META_SIZE);
  bg_gsp_wr64(buf + WPR_MAGIC, WPR_META_MAGIC);
  bg_gsp_wr64(buf + WPR_REVISION, WPR_META_REVISION);
  bg_gsp_wr64(buf + WPR_RADIX3_ADDR, in->radix3_bus);
  bg_gsp_wr64(buf + WPR_RADIX3_SIZE, in->radix3_image_size);
  bg_gsp_wr64(buf + WPR_BL_ADDR, in->bootloader_bus);
  bg_gsp_wr64(buf + WPR_BL_SIZE, in->bootloader_size);
  bg_gsp_wr64(buf + WPR_BL_CODE_OFF, in->bl_code_offset);
  bg_gsp_wr64(buf + WPR_BL_DATA_OFF, in->bl_data_offset);
  bg_gsp_wr64(buf + WPR_BL_MANIFEST_OFF, in->bl_manifest_offset);
  bg_gsp_wr64(buf + WPR_SIG_ADDR, in->signature_bus);
  bg_gsp_wr64(buf + WPR_SIG_SIZE, WPR_SIGNATURE_SIZE);
  if (in->chip->fsp_boot) {
    bg_gsp_wr64(buf + WPR_VGA_SIZE, FSP_VGA_SIZE);
    bg_gsp_wr32(buf + WPR_PMU_RESERVED, FSP_PMU_RESERVED);
    bg_gsp_wr64(buf + WPR_NONWPR_HEAP_SIZE, FSP_NONWPR_HEAP_SIZE);
    bg_gsp_wr64(buf + WPR_HEAP_SIZE, FSP_GSP_HEAP_SIZE);
    bg_gsp_wr64(buf + WPR_FRTS_SIZE, FRTS_SIZE);
    return 0;
  }
  if (!in->vram_size || in->vram_size % MiB)
    return bg_error(BG_EINVAL, "GSP WPR metadata (%s): VRAM size 0x%llx is not a non-zero multiple of 1 MiB",
                    in->chip->name, (unsigned long long)in->vram_size);
  /* Top-down from the end of VRAM; every step must stay above 0. */
  uint64_t need = VGA_SIZE + FRTS_SIZE + in->bootloader_size + in->radix3_total_size + 64 * 1024 + GSP_HEAP_SIZE +
                  MiB + PAGE + MiB + NONWPR_HEAP_SIZE + MiB;
  if (in->vram_size < need || in->bootloader_size > in->vram_size || in->radix3_total_size > in->vram_size)
    return bg_error(BG_EINVAL, "GSP WPR metadata (%s): VRAM size 0x%llx too small for the GSP layout (needs 0x%llx: "
                    "bootloader 0x%llx, radix3 0x%llx, heap 0x%llx)", in->chip->name,
                    (unsigned long long)in->vram_size, (unsigned long long)need,
                    (unsigned long long)in->bootloader_size, (unsigned long long)in->radix3_total_size,
                    (unsigned long long)GSP_HEAP_SIZE);
  uint64_t vga = in->vram_size - VGA_SIZE;
  uint64_t frts = vga - FRTS_SIZE; /* = vram - 2 MiB, where FWSEC-FRTS writes (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN) */
  uint64_t boot = frts - in->bootloader_size;
  uint64_t fw = down(boot - in->radix3_total_size, 64 * 1024);
  uint64_t heap = down(fw - GSP_HEAP_SIZE, MiB);
  uint64_t wpr = down(heap - PAGE, MiB);
  uint64_t nonwpr = down(wpr - NONWPR_HEAP_SIZE, MiB);
  bg_gsp_wr64(buf + WPR_VGA_OFF, vga);
  bg_gsp_wr64(buf + WPR_VGA_SIZE, VGA_SIZE);
  bg_gsp_wr64(buf + WPR_END, vga);
  bg_gsp_wr64(buf + WPR_FRTS_OFF, frts);
  bg_gsp_wr64(buf + WPR_FRTS_SIZE, FRTS_SIZE);
  bg_gsp_wr64(buf + WPR_BOOT_BIN_OFF, boot);
  bg_gsp_wr64(buf + WPR_FW_OFF, fw);
  bg_gsp_wr64(buf + WPR_HEAP_OFF, heap);
  bg_gsp_wr64(buf + WPR_HEAP_SIZE, GSP_HEAP_SIZE);
  bg_gsp_wr64(buf + WPR_START, wpr);
  bg_gsp_wr64(buf + WPR_NONWPR_HEAP_OFF, nonwpr);
  bg_gsp_wr64(buf + WPR_NONWPR_HEAP_SIZE, NONWPR_HEAP_SIZE);
  bg_gsp_wr64(buf + WPR_RSVD_START, nonwpr);
  bg_gsp_wr64(buf + WPR_FB_SIZE, in->vram_size);
  return 0;
}

/* ---- GspSystemInfo (570, 928 B; tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw) ---- */
enum {
  SI_BAR0 = 0, SI_BAR1 = 8, SI_BAR3 = 16, SI_BDF = 32, SI_MAX_USER_VA = 72, SI_CFG_MIRROR_BASE = 80,
  SI_CFG_MIRROR_SIZE = 84, SI_DEVICE_ID = 88, SI_SUBDEVICE_ID = 92, SI_REVISION_ID = 96, SI_PASSTHRU = 840,
};
_Static_assert(SI_PASSTHRU < BG_NV_SYSTEM_INFO_SIZE, "GspSystemInfo is 928 bytes");
#define SI_MAX_USER_VA_VALUE 0x7ffffffff000ull
#define SI_CFG_MIRROR_SIZE_VALUE 0x1000u

int bg_nv_gsp_system_info(uint8_t *buf, size_t cap, const bg_nv_sysinfo_in *in) {
  if (!buf || cap < BG_NV_SYSTEM_INFO_SIZE)
    return bg_error(BG_EINVAL, "GspSystemInfo: buffer of %zu bytes, expected %u", cap, BG_NV_SYSTEM_INFO_SIZE);
  if (!in || !in->chip) return bg_error(BG_EINVAL, "GspSystemInfo: no chip");
  if (in->dev > 31 || in->fn > 7)
    return bg_error(BG_EINVAL, "GspSystemInfo: PCI device %u function %u, expected device 0..31 and function 0..7",
                    in->dev, in->fn);
  memset(buf, 0, BG_NV_SYSTEM_INFO_SIZE);
  bg_gsp_wr64(buf + SI_BAR0, in->bar0_bus);
  bg_gsp_wr64(buf + SI_BAR1, in->bar1_bus);
  bg_gsp_wr64(buf + SI_BAR3, in->bar3_bus);
  bg_gsp_wr64(buf + SI_BDF, (uint64_t)in->bus << 8 | (uint64_t)in->dev << 3 | in->fn);
  bg_gsp_wr64(buf + SI_MAX_USER_VA, SI_MAX_USER_VA_VALUE);
  bg_gsp_wr32(buf + SI_CFG_MIRROR_BASE, in->chip->pci_config_mirror);
  bg_gsp_wr32(buf + SI_CFG_MIRROR_SIZE, SI_CFG_MIRROR_SIZE_VALUE);
  bg_gsp_wr32(buf + SI_DEVICE_ID, in->cfg_id);
  bg_gsp_wr32(buf + SI_SUBDEVICE_ID, in->cfg_subsys);
  bg_gsp_wr32(buf + SI_REVISION_ID, in->revision);
  buf[SI_PASSTHRU] = 1;
  return 0;
}

/* ---- PACKED_REGISTRY_TABLE (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw; r535.c r535_gsp_rpc_set_registry) ---- */
enum { REG_SIZE = 0, REG_NUM = 4, REG_ENTRIES = 8, RE_NAME_OFF = 0, RE_TYPE = 4, RE_DATA = 8, RE_LENGTH = 12, RE_SIZE = 16 };
#define REG_TYPE_DWORD 1u

int bg_nv_gsp_registry(uint8_t *buf, size_t cap, size_t *len) {
  static const struct { const char *name; uint32_t value; } keys[] = {
      {"RMForcePcieConfigSave", 1}, {"RMSecBusResetEnable", 1}};
  const size_t nkeys = sizeof keys / sizeof keys[0];
  size_t total = REG_ENTRIES + RE_SIZE * nkeys;
  for (size_t i = 0; i < nkeys; i++) total += strlen(keys[i].name) + 1;
  if (!buf || !len || cap < total)
    return bg_error(BG_EINVAL, "GSP registry: buffer of %zu bytes, the table needs %zu", cap, total);
  memset(buf, 0, total);
  size_t name_at = REG_ENTRIES + RE_SIZE * nkeys;
  for (size_t i = 0; i < nkeys; i++) {
    uint8_t *e = buf + REG_ENTRIES + RE_SIZE * i;
    bg_gsp_wr32(e + RE_NAME_OFF, (uint32_t)name_at);
    e[RE_TYPE] = REG_TYPE_DWORD;
    bg_gsp_wr32(e + RE_DATA, keys[i].value);
    bg_gsp_wr32(e + RE_LENGTH, 4);
    size_t k = strlen(keys[i].name) + 1;
    memcpy(buf + name_at, keys[i].name, k);
    name_at += k;
  }
  bg_gsp_wr32(buf + REG_SIZE, (uint32_t)total);
  bg_gsp_wr32(buf + REG_NUM, (uint32_t)nkeys);
  *len = total;
  return 0;
}

/* ---- FSP boot (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT) ---- */
#define FMC_PARAMS_SIZE 80u
enum {
  FMC_BOOT_GSP_RM = 8, /* GSP_ACR_BOOT_GSP_RM_PARAMS (32 B) */
  ACR_TARGET = 0, ACR_DESC_SIZE = 4, ACR_DESC_OFFSET = 8, ACR_IS_RM_BOOT = 28,
  FMC_GSP_RM = 40,     /* GSP_RM_PARAMS (16 B) */
  RM_TARGET = 0, RM_BOOT_ARGS = 8,
};
_Static_assert(FMC_BOOT_GSP_RM + ACR_IS_RM_BOOT < FMC_GSP_RM, "GSP_ACR_BOOT_GSP_RM_PARAMS is 32 bytes at 8");
_Static_assert(FMC_GSP_RM + RM_BOOT_ARGS + 8 <= FMC_PARAMS_SIZE, "GSP_RM_PARAMS is 16 bytes at 40");
#define GSP_DMA_TARGET_COHERENT_SYSTEM 1u

int bg_nv_fmc_boot_params(uint8_t *buf, size_t cap, uint64_t wpr_meta_bus, uint64_t libos_args_bus) {
  if (!buf || cap < FMC_PARAMS_SIZE)
    return bg_error(BG_EINVAL, "GSP_FMC_BOOT_PARAMS: buffer of %zu bytes, expected %u", cap, FMC_PARAMS_SIZE);
  memset(buf, 0, FMC_PARAMS_SIZE);
  uint8_t *acr = buf + FMC_BOOT_GSP_RM, *rm = buf + FMC_GSP_RM;
  bg_gsp_wr32(acr + ACR_TARGET, GSP_DMA_TARGET_COHERENT_SYSTEM);
  bg_gsp_wr32(acr + ACR_DESC_SIZE, BG_NV_WPR_META_SIZE);
  bg_gsp_wr64(acr + ACR_DESC_OFFSET, wpr_meta_bus);
  acr[ACR_IS_RM_BOOT] = 1;
  bg_gsp_wr32(rm + RM_TARGET, GSP_DMA_TARGET_COHERENT_SYSTEM);
  bg_gsp_wr64(rm + RM_BOOT_ARGS, libos_args_bus);
  return 0;
}

/* NVDM_PAYLOAD_COT (kern_fsp_cot_payload.h, packed; tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT) */
#define COT_SIZE 860u
enum {
  COT_VER = 0, COT_LEN = 2, COT_FMC_SYSMEM = 4, COT_FRTS_SYSMEM_OFF = 12, COT_FRTS_SYSMEM_SIZE = 20,
  COT_FRTS_VIDMEM_OFF = 24, COT_FRTS_VIDMEM_SIZE = 32, COT_HASH = 36, COT_PUBKEY = 84, COT_SIGNATURE = 468,
  COT_BOOT_ARGS = 852,
};
_Static_assert(COT_HASH + 48 == COT_PUBKEY && COT_PUBKEY + 384 == COT_SIGNATURE && COT_SIGNATURE + 384 == COT_BOOT_ARGS,
               "hash384[48], publicKey[384], signature[384] are contiguous");
_Static_assert(COT_BOOT_ARGS + 8 == COT_SIZE, "NVDM_PAYLOAD_COT is 860 bytes");
#define COT_FRTS_VIDMEM_SIZE_VALUE 0x100000u

int bg_nv_cot_payload(uint8_t *buf, size_t cap, uint16_t version, const void *fmc_, uint64_t fmc_image_bus,
                      uint64_t frts_vidmem_offset, uint64_t boot_params_bus) {
  const bg_nv_fmc *fmc = fmc_;
  if (!buf || cap < COT_SIZE)
    return bg_error(BG_EINVAL, "NVDM_PAYLOAD_COT: buffer of %zu bytes, expected %u", cap, COT_SIZE);
  if (version != 1 && version != 2)
    return bg_error(BG_EINVAL, "NVDM_PAYLOAD_COT: version %u, expected 1 (GH100) or 2 (GB20x)", version);
  if (!fmc) return bg_error(BG_EINVAL, "NVDM_PAYLOAD_COT: no FMC (hash, public key, signature)");
  memset(buf, 0, COT_SIZE);
  bg_gsp_wr16(buf + COT_VER, version);
  bg_gsp_wr16(buf + COT_LEN, COT_SIZE);
  bg_gsp_wr64(buf + COT_FMC_SYSMEM, fmc_image_bus);
  bg_gsp_wr64(buf + COT_FRTS_VIDMEM_OFF, frts_vidmem_offset);
  bg_gsp_wr32(buf + COT_FRTS_VIDMEM_SIZE, COT_FRTS_VIDMEM_SIZE_VALUE);
  memcpy(buf + COT_HASH, fmc->hash, sizeof fmc->hash);
  memcpy(buf + COT_PUBKEY, fmc->public_key, sizeof fmc->public_key);
  memcpy(buf + COT_SIGNATURE, fmc->signature, sizeof fmc->signature);
  bg_gsp_wr64(buf + COT_BOOT_ARGS, boot_params_bus);
  return 0;
}

/* MCTP transport header (SOM | EOM) and NVDM header (type 0x7e = vendor-defined PCI, vendor 0x10de, NVDM type). */
#define MCTP_SOM_EOM 0xc0000000u
#define NVDM_MSG_TYPE_VDM 0x7eu
#define NVDM_VENDOR_NVIDIA 0x10deu
#define FSP_MSG_MAX 0x400u /* the FSP's EMEM queue (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT) */

int bg_nv_fsp_message(uint8_t *buf, size_t cap, uint8_t nvdm_type, const void *payload, size_t n, size_t *len) {
  if (!buf || !len || (n && !payload)) return bg_error(BG_EINVAL, "FSP message: NULL buffer, length or payload");
  size_t total = 8 + n + (4 - n % 4) % 4; /* padded only up to the next dword */
  if (total >= FSP_MSG_MAX)
    return bg_error(BG_EINVAL, "FSP message (NVDM type 0x%02x): %zu bytes, the FSP queue takes less than 0x%x",
                    nvdm_type, total, FSP_MSG_MAX);
  if (cap < total) return bg_error(BG_EINVAL, "FSP message: buffer of %zu bytes, the message needs %zu", cap, total);
  memset(buf, 0, total);
  bg_gsp_wr32(buf, MCTP_SOM_EOM);
  bg_gsp_wr32(buf + 4, NVDM_MSG_TYPE_VDM | NVDM_VENDOR_NVIDIA << 8 | (uint32_t)nvdm_type << 24);
  if (n) memcpy(buf + 8, payload, n);
  *len = total;
  return 0;
}
