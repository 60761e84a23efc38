/* tests/mockgpu/nv/mock_nv_uvm.c: the emulated /dev/nvidia-uvm (kernel-open/nvidia-uvm/uvm_ioctl.h numbers and
 * layouts, 580) and the GPU VA map its external ranges make.
 *
 * Rules (statuses in rmStatus, the ioctl itself succeeds as uvm.c uvm_ioctl does): any call other than
 * UVM_INITIALIZE / UVM_MM_INITIALIZE on a fd before UVM_INITIALIZE -> NV_ERR_ILLEGAL_ACTION (uvm.c: the fd has no
 * VA space yet); REGISTER_GPU of an unknown UUID -> NV_ERR_GPU_UUID_NOT_FOUND, twice -> NV_ERR_INVALID_DEVICE;
 * REGISTER_GPU_VASPACE / REGISTER_CHANNEL / MAP_EXTERNAL_ALLOCATION for a GPU not registered (or without a VA space)
 * -> NV_ERR_INVALID_DEVICE; CREATE_EXTERNAL_RANGE overlapping another -> NV_ERR_UVM_ADDRESS_IN_USE, unaligned ->
 * NV_ERR_INVALID_ADDRESS; MAP_EXTERNAL_ALLOCATION outside one external range -> NV_ERR_INVALID_ADDRESS, past the
 * memory object -> NV_ERR_INVALID_LIMIT; UVM_FREE of a base that starts no range -> NV_ERR_INVALID_ADDRESS. */
#include <errno.h>
#include <stdlib.h>

#include "mock_nv_internal.h"

#define S nvm_S

enum {
  UVM_INITIALIZE = 0x30000001, UVM_REGISTER_GPU_VASPACE = 25, UVM_REGISTER_CHANNEL = 27, UVM_ENABLE_PEER_ACCESS = 29,
  UVM_MAP_EXTERNAL_ALLOCATION = 33, UVM_FREE = 34, UVM_REGISTER_GPU = 37, UVM_UNREGISTER_GPU = 38,
  UVM_CREATE_EXTERNAL_RANGE = 73, UVM_MM_INITIALIZE = 75,
};
enum { NVS_ERR_GPU_UUID_NOT_FOUND = 0x12 };

static int gpu_of_uuid(const uint8_t *u) {
  for (int i = 0; i < S.count; i++)
    if (memcmp(S.gpu[i].uuid, u, 16) == 0) return i;
  return -1;
}

/* The last mapping each GPU hit: kernels touch few buffers many times. Cleared whenever a mapping goes. */
static nvm_range *last_hit[8];
static void forget_hits(void) { memset(last_hit, 0, sizeof last_hit); }

static bool covers(const nvm_range *m, int gpu, uint64_t va, uint64_t n) {
  return (m->gpu_mask >> gpu & 1) && va >= m->base && va - m->base < m->length && n <= m->length - (va - m->base);
}

uint8_t *nvm_va(int gpu, uint64_t va, uint64_t n) {
  nvm_range *m = last_hit[gpu];
  if (!m || !covers(m, gpu, va, n))
    for (m = S.maps; m && !covers(m, gpu, va, n); m = m->next) {
    }
  if (!m) return NULL;
  last_hit[gpu] = m;
  return m->mem->mem.view + m->mem_offset + (va - m->base);
}

void nvm_ranges_drop_mem(const nvm_obj *mem) {
  forget_hits();
  for (nvm_range **pp = &S.maps; *pp;) {
    nvm_range *m = *pp;
    if (m->mem == mem) {
      *pp = m->next;
      free(m);
    } else pp = &m->next;
  }
}

static void free_list(nvm_range **l) {
  while (*l) {
    nvm_range *r = *l;
    *l = r->next;
    free(r);
  }
}
void nvm_ranges_free_all(void) {
  forget_hits();
  free_list(&S.ranges);
  free_list(&S.maps);
}

static bool overlaps(const nvm_range *l, uint64_t base, uint64_t len) {
  for (; l; l = l->next)
    if (base < l->base + l->length && l->base < base + len) return true;
  return false;
}

/* MAP_EXTERNAL_ALLOCATION: base @0, length @8, offset @16, perGpuAttributes[256] @24 (36 B: gpuUuid @0,
 * gpuMappingType @16, ...), gpuAttributesCount @9240, rmCtrlFd @9248, hClient @9252, hMemory @9256. */
static uint32_t map_external(nvm_fd *f, uint8_t *p) {
  uint64_t base = nvm_g64(p, 0), len = nvm_g64(p, 8), off = nvm_g64(p, 16), cnt = nvm_g64(p, 9240);
  nvm_obj *mem = nvm_obj_find(nvm_g32(p, 9252), nvm_g32(p, 9256));
  nvm_range *res = NULL;
  for (nvm_range *r = S.ranges; r; r = r->next)
    if (base >= r->base && len <= r->length && base - r->base <= r->length - len) res = r;
  if (!len || !res || base % 4096 || len % 4096) return NVS_ERR_INVALID_ADDRESS;
  if (!mem || (mem->cls != NVC_MEMORY_USER && mem->cls != NVC_MEMORY_SYSTEM && mem->cls != NVC_OS_DESCRIPTOR))
    return NVS_ERR_INVALID_OBJECT_HANDLE;
  if (off % 4096 || off > mem->mem.size || len > mem->mem.size - off) return NVS_ERR_INVALID_LIMIT;
  if (!nvm_fd_get((int)nvm_g32(p, 9248)) || nvm_fd_get((int)nvm_g32(p, 9248))->kind != NVM_FD_CTL)
    return NVS_ERR_INVALID_ARGUMENT;
  if (cnt == 0 || cnt > 256) return NVS_ERR_INVALID_ARGUMENT;
  uint32_t mask = 0;
  for (uint64_t i = 0; i < cnt; i++) {
    const uint8_t *a = p + 24 + 36 * i;
    int g = gpu_of_uuid(a);
    if (g < 0 || !(f->uvm_vaspace >> g & 1)) return NVS_ERR_INVALID_DEVICE;
    if (nvm_g32(a, 16) > 3) return NVS_ERR_INVALID_ARGUMENT; /* UvmGpuMappingType */
    mask |= 1u << g;
  }
  /* The same allocation mapped on more GPUs widens the mapping; anything else overlapping is in use. */
  for (nvm_range *m = S.maps; m; m = m->next) {
    if (m->base == base && m->length == len && m->mem == mem && m->mem_offset == off) {
      m->gpu_mask |= mask;
      return NVS_OK;
    }
    if (base < m->base + m->length && m->base < base + len && (m->gpu_mask & mask))
      return NVS_ERR_UVM_ADDRESS_IN_USE;
  }
  nvm_range *m = calloc(1, sizeof *m);
  if (!m) return NVS_ERR_NO_MEMORY;
  *m = (nvm_range){.base = base, .length = len, .mem = mem, .mem_offset = off, .gpu_mask = mask, .next = S.maps};
  S.maps = m;
  return NVS_OK;
}

int nvm_uvm_ioctl(nvm_fd *f, unsigned long nr, void *arg) {
  uint8_t *p = arg;
  unsigned st_off;
  switch (nr) {
  case UVM_INITIALIZE: st_off = 8; break;
  case UVM_MM_INITIALIZE: st_off = 4; break;
  case UVM_REGISTER_GPU: st_off = 36; break;
  case UVM_UNREGISTER_GPU: st_off = 16; break;
  case UVM_REGISTER_GPU_VASPACE: st_off = 28; break;
  case UVM_REGISTER_CHANNEL: st_off = 48; break;
  case UVM_ENABLE_PEER_ACCESS: st_off = 32; break;
  case UVM_CREATE_EXTERNAL_RANGE: st_off = 16; break;
  case UVM_MAP_EXTERNAL_ALLOCATION: st_off = 9260; break;
  case UVM_FREE: st_off = 16; break; /* 570/580 UVM_FREE_PARAMS {base, length, rmStatus} */
  default: return ENOTTY;            /* uvm.c: unknown command -> -EINVAL; ENOTTY names it better */
  }
  uint32_t st = NVS_OK;
  if (nr == UVM_INITIALIZE) {
    if (f->uvm_init || f->uvm_mm) st = NVS_ERR_INVALID_STATE;
    else f->uvm_init = true;
  } else if (nr == UVM_MM_INITIALIZE) {
    nvm_fd *u = nvm_fd_get((int)nvm_g32(p, 0));
    if (f->uvm_init) st = NVS_ERR_ILLEGAL_ACTION; /* a VA-space fd cannot become an mm fd */
    else if (!u || u->kind != NVM_FD_UVM || !u->uvm_init) st = NVS_ERR_INVALID_ARGUMENT;
    else f->uvm_mm = true;
  } else if (!f->uvm_init) st = NVS_ERR_ILLEGAL_ACTION;
  else switch (nr) {
    case UVM_REGISTER_GPU: {
      int g = gpu_of_uuid(p);
      if (g < 0) st = NVS_ERR_GPU_UUID_NOT_FOUND;
      else if (f->uvm_registered >> g & 1) st = NVS_ERR_INVALID_DEVICE;
      else {
        f->uvm_registered |= 1u << g;
        nvm_p32(p, 16, 0); /* numaEnabled */
      }
      break;
    }
    case UVM_UNREGISTER_GPU: {
      int g = gpu_of_uuid(p);
      if (g < 0 || !(f->uvm_registered >> g & 1)) st = NVS_ERR_INVALID_DEVICE;
      else {
        f->uvm_registered &= ~(1u << g);
        f->uvm_vaspace &= ~(1u << g);
      }
      break;
    }
    case UVM_REGISTER_GPU_VASPACE: {
      int g = gpu_of_uuid(p);
      nvm_fd *ctl = nvm_fd_get((int)nvm_g32(p, 16));
      nvm_obj *va = nvm_obj_find(nvm_g32(p, 20), nvm_g32(p, 24));
      if (g < 0 || !(f->uvm_registered >> g & 1) || (f->uvm_vaspace >> g & 1)) st = NVS_ERR_INVALID_DEVICE;
      else if (!ctl || ctl->kind != NVM_FD_CTL) st = NVS_ERR_INVALID_ARGUMENT;
      else if (!va || va->cls != NVC_VASPACE || va->gpu != g) st = NVS_ERR_OBJECT_NOT_FOUND;
      else f->uvm_vaspace |= 1u << g;
      break;
    }
    case UVM_REGISTER_CHANNEL: {
      int g = gpu_of_uuid(p);
      nvm_obj *ch = nvm_obj_find(nvm_g32(p, 20), nvm_g32(p, 24));
      if (g < 0 || !(f->uvm_vaspace >> g & 1)) st = NVS_ERR_INVALID_DEVICE;
      else if (!ch || ch->cls != S.cfg->gpfifo || ch->gpu != g) st = NVS_ERR_OBJECT_NOT_FOUND;
      else if (nvm_g64(p, 40) == 0) st = NVS_ERR_INVALID_ARGUMENT;
      break;
    }
    case UVM_ENABLE_PEER_ACCESS: {
      int a = gpu_of_uuid(p), b = gpu_of_uuid(p + 16);
      if (a < 0 || b < 0 || a == b || !(f->uvm_registered >> a & 1) || !(f->uvm_registered >> b & 1))
        st = NVS_ERR_INVALID_DEVICE;
      break;
    }
    case UVM_CREATE_EXTERNAL_RANGE: {
      uint64_t base = nvm_g64(p, 0), len = nvm_g64(p, 8);
      if (!len || base % 4096 || len % 4096 || base + len < base || base + len > (1ull << 57)) st = NVS_ERR_INVALID_ADDRESS;
      else if (overlaps(S.ranges, base, len)) st = NVS_ERR_UVM_ADDRESS_IN_USE;
      else {
        nvm_range *r = calloc(1, sizeof *r);
        if (!r) st = NVS_ERR_NO_MEMORY;
        else {
          *r = (nvm_range){.base = base, .length = len, .next = S.ranges};
          S.ranges = r;
        }
      }
      break;
    }
    case UVM_MAP_EXTERNAL_ALLOCATION: st = map_external(f, p); break;
    case UVM_FREE: {
      uint64_t base = nvm_g64(p, 0);
      nvm_range **pp = &S.ranges;
      while (*pp && (*pp)->base != base) pp = &(*pp)->next;
      if (!*pp) st = NVS_ERR_INVALID_ADDRESS;
      else {
        nvm_range *r = *pp;
        *pp = r->next;
        forget_hits();
        for (nvm_range **mp = &S.maps; *mp;) {
          nvm_range *m = *mp;
          if (m->base >= r->base && m->base - r->base < r->length) {
            *mp = m->next;
            free(m);
          } else mp = &m->next;
        }
        free(r);
      }
      break;
    }
    }
  nvm_p32(p, st_off, st);
  return 0;
}
