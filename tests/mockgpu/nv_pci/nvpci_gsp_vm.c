/* tests/mockgpu/nv_pci/nvpci_gsp_vm.c: the GSP-RM model's view of a VA space's page tables: SET_PAGE_DIRECTORY (RPC
 * function 54) records the root of a FERMI_VASPACE_A, and nvpci_translate walks it with the emulated GPU's own MMU
 * (nvpci_mmu.h) for tests and engines.
 *
 * Facts (open-gpu-kernel-modules 570, never nv/): g_rpc-structures.h rpc_set_page_directory_v1E_05 {hClient @0,
 * hDevice @4, pasid @8, params @16 (NV0080_CTRL_DMA_SET_PAGE_DIRECTORY_PARAMS_v1E_05: physAddress u64 @16, numEntries
 * @24, flags @28, hVASpace @32, chId @36, subDeviceId @40, pasid @44)}, 48 bytes; ctrl0080dma.h flags APERTURE 1:0
 * (VIDMEM 0), PRESERVE_PDES 2:2, ALL_CHANNELS 3:3, IGNORE_CHANNEL_BUSY 4:4; subDeviceId is the subdevice's ID + 1, 0
 * for broadcast. The root table's entry count: 4 PDE3 entries in the v2 format (VA bits 48:47), 2 PDE4 entries in v3
 * (bit 56) (open-gpu-kernel-modules gh100 dev_mmu.h). Statuses as RM gives them: an unknown client
 * NV_ERR_INVALID_CLIENT, a device or VA-space handle that is not one NV_ERR_INVALID_OBJECT_HANDLE, a bad parameter
 * NV_ERR_INVALID_ARGUMENT. Stricter than RM where the emulator models less: the root must be in VRAM (no system-memory
 * aperture) and ALL_CHANNELS set (there is no per-channel instance block). */
#include <stdio.h>

#include "nvpci_gsp_internal.h"
#include "nvpci_mmu.h"

enum { CLS_DEVICE = 0x80, CLS_VASPACE = 0x90f1, PD_PAYLOAD = 48 };
#define PD_FLAGS_APERTURE 0x3u
#define PD_FLAGS_ALL_CHANNELS 0x8u

static uint32_t set_pd(nvpci_gsp *s, const uint8_t *p, size_t n) {
  if (n != PD_PAYLOAD) {
    nvpci_fail(s->g, "GSP: SET_PAGE_DIRECTORY payload of %zu bytes, rpc_set_page_directory_v1E_05 is %d", n,
               PD_PAYLOAD);
    return GSPM_ERR_INVALID_ARGUMENT;
  }
  uint32_t hc = gspm_g32(p, 0), hd = gspm_g32(p, 4), entries = gspm_g32(p, 24), flags = gspm_g32(p, 28);
  uint32_t hva = gspm_g32(p, 32), subdev = gspm_g32(p, 40);
  uint64_t pa = gspm_g64(p, 16), vram_size = 0;
  if (!gspm_rm_client(s, hc)) return GSPM_ERR_INVALID_CLIENT;
  gspm_obj *dev = gspm_rm_find(s, hc, hd);
  if (!dev || dev->cls != CLS_DEVICE) return GSPM_ERR_INVALID_OBJECT_HANDLE;
  gspm_obj *va = gspm_rm_find(s, hc, hva);
  if (!va || va->cls != CLS_VASPACE || va->parent != hd) return GSPM_ERR_INVALID_OBJECT_HANDLE;
  uint32_t want = s->chip && s->chip->mmu_ver == 3 ? 2 : 4;
  nvpci_vram(s->g, &vram_size);
  if (entries != want || (flags & PD_FLAGS_APERTURE) != 0 || !(flags & PD_FLAGS_ALL_CHANNELS) || subdev > 1 ||
      (pa & 0xfff) || pa >= vram_size || vram_size - pa < 8ull * entries)
    return GSPM_ERR_INVALID_ARGUMENT;
  va->has_root = true;
  va->root_pa = pa;
  va->root_entries = entries;
  s->pd_set = true;
  s->pd_client = hc;
  s->pd_vaspace = hva;
  s->pd_root = pa;
  s->pd_entries = entries;
  return GSPM_OK;
}

/* The reply carries the payload back unchanged; the status is the record's rpc_result. */
uint32_t gspm_rm_set_page_directory(nvpci_gsp *s, uint8_t *p, size_t n) { return set_pd(s, p, n); }

int nvpci_gsp_page_directory(const nvpci_gsp *s, uint32_t *client, uint32_t *hvaspace, uint64_t *root_pa,
                             unsigned *num_entries) {
  if (!s || !s->pd_set) return -1;
  const gspm_obj *o = s->objs; /* only while that VA space lives (FREE takes its root with it) */
  while (o && !(o->client == s->pd_client && o->handle == s->pd_vaspace && o->has_root)) o = o->next;
  if (!o) return -1;
  if (client) *client = s->pd_client;
  if (hvaspace) *hvaspace = s->pd_vaspace;
  if (root_pa) *root_pa = s->pd_root;
  if (num_entries) *num_entries = s->pd_entries;
  return 0;
}

int nvpci_gsp_mmu_version(const nvpci_gsp *s) { return s && s->chip ? s->chip->mmu_ver : 0; }

static int sys_read(void *ctx, uint64_t bus, void *dst, size_t n) { return nvpci_dma_read(ctx, bus, dst, n); }

int nvpci_translate(nvpci_gpu *g, uint64_t va, uint64_t *pa, int *aperture, char *why, size_t n) {
  nvpci_gsp *s = nvpci_gsp_of(g);
  uint64_t root = 0;
  if (nvpci_gsp_page_directory(s, NULL, NULL, &root, NULL) < 0) {
    if (why && n) snprintf(why, n, "no page directory: GSP-RM accepted no SET_PAGE_DIRECTORY");
    return -NVPCI_MMU_UNMAPPED;
  }
  nvpci_mmu_mem mem = {.sys_read = sys_read, .ctx = g};
  mem.vram = nvpci_vram(g, &mem.vram_size);
  nvpci_mmu_result r;
  int rc = nvpci_mmu_walk(&mem, s->chip->mmu_ver, root, false, va, &r, why, n);
  if (rc < 0) return rc;
  if (pa) *pa = r.pa;
  if (aperture) *aperture = r.aperture;
  return 0;
}
