/* tests/mockgpu/nv/mock_nv_rm.c: the emulated RM's object table: NV_ESC_RM_ALLOC / FREE / MAP_MEMORY /
 * UNMAP_MEMORY / MAP_MEMORY_DMA / ALLOC_MEMORY.
 *
 * Accepted: only the classes of the configured GPU, each under its parent class (resserv's parent lists,
 * src/nvidia/generated/g_*_nvoc.c), with the 580 driver's parameter size. Rejections and their statuses:
 * unknown class or another generation's -> NV_ERR_INVALID_CLASS (resource_desc.c rmapiGetClassAllocParamSize);
 * missing parent or one of the wrong class -> NV_ERR_INVALID_OBJECT_PARENT; handle in use -> NV_ERR_INSERT_DUPLICATE_NAME
 * (resserv clientAllocResource); params NULL for a class that requires them -> NV_ERR_INVALID_ARGUMENT
 * (param_copy.c rmapiParamsCopyInit). Stricter than RM: a paramsSize other than the class's size (or 0 for a class
 * without parameters) is NV_ERR_INVALID_ARGUMENT too (RM takes the size from the class and would read past a short
 * block; control.c returns that status for a control of the wrong size). hObjectNew 0 gets an RM-chosen handle
 * (RS_UNIQUE_HANDLE_BASE 0xcaf00000 upwards), as serverAllocResource does. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mock_nv_internal.h"

#define S nvm_S

nvm_obj *nvm_obj_find(uint32_t client, uint32_t handle) {
  for (nvm_obj *o = S.objs; o; o = o->next)
    if (o->client == client && o->handle == handle) return o;
  return NULL;
}

static bool is_usermode(uint32_t cls) { return cls == NVC_TURING_USERMODE_A || cls == NVC_HOPPER_USERMODE_A; }
static bool is_mem(uint32_t cls) { return cls == NVC_MEMORY_USER || cls == NVC_MEMORY_SYSTEM || cls == NVC_OS_DESCRIPTOR; }

/* Class rules: parent class (0: none, the client itself for DEVICE), parameter size on 580 (nvos.h, cl*.h,
 * alloc_channel.h) and whether the parameters are optional. */
typedef struct {
  uint32_t cls, parent, size;
  bool optional;
} class_rule;

static const class_rule *rule_of(uint32_t cls) {
  const nvm_config *c = S.cfg;
  static class_rule r;
  static const class_rule fixed[] = {
      {NVC_ROOT_CLIENT, 0, 0, true},                /* NV0000_ALLOC_PARAMETERS optional; baregpu sends none */
      {NVC_DEVICE, NVC_ROOT_CLIENT, 56, false},     /* NV0080_ALLOC_PARAMETERS */
      {NVC_SUBDEVICE, NVC_DEVICE, 4, true},         /* NV2080_ALLOC_PARAMETERS */
      {NVC_MEMORY_VIRTUAL, NVC_DEVICE, 24, false},  /* NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS */
      {NVC_VASPACE, NVC_DEVICE, 56, false},         /* NV_VASPACE_ALLOCATION_PARAMETERS (580: + pasid) */
      {NVC_TSG, NVC_DEVICE, 20, false},             /* NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS */
      {NVC_MEMORY_USER, NVC_DEVICE, 128, false},    /* NV_MEMORY_ALLOCATION_PARAMS */
      {NVC_MEMORY_SYSTEM, NVC_DEVICE, 128, false},
      {NVC_DEBUGGER, NVC_DEVICE, 12, false},        /* NV83DE_ALLOC_PARAMETERS */
      {NVC_CTXSHARE, NVC_TSG, 12, false},           /* NV_CTXSHARE_ALLOCATION_PARAMETERS */
  };
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    if (fixed[i].cls == cls) return &fixed[i];
  if (cls == c->usermode) r = (class_rule){cls, NVC_SUBDEVICE, cls == NVC_HOPPER_USERMODE_A ? 2 : 0, true};
  else if (cls == c->gpfifo) r = (class_rule){cls, NVC_TSG, 368, false}; /* NV_CHANNEL_ALLOC_PARAMS (570/580) */
  else if (cls == c->compute) r = (class_rule){cls, c->gpfifo, 16, true}; /* NV_GR_ALLOCATION_PARAMETERS */
  else if (cls == c->copy) r = (class_rule){cls, c->gpfifo, 8, true};     /* NVB0B5_ALLOCATION_PARAMETERS */
  else return NULL;
  return &r;
}

static nvm_obj *new_obj(uint32_t client, uint32_t handle, uint32_t parent, uint32_t cls, int gpu) {
  nvm_obj *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  *o = (nvm_obj){.client = client, .handle = handle, .parent = parent, .cls = cls, .gpu = gpu, .chan = -1,
                 .mem = {.memfd = -1}};
  o->next = S.objs;
  S.objs = o;
  return o;
}

static uint32_t gen_handle(uint32_t client) {
  while (nvm_obj_find(client, S.next_handle)) S.next_handle++;
  return S.next_handle++;
}

/* memfd backing of size bytes (sparse until touched). 0 or an NV status. */
static uint32_t mem_back(nvm_mem *m, uint64_t size, const char *name) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return NVS_ERR_NO_MEMORY;
  if (ftruncate(fd, (off_t)size) != 0) {
    close(fd);
    return NVS_ERR_NO_MEMORY;
  }
  void *v = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (v == MAP_FAILED) {
    close(fd);
    return NVS_ERR_NO_MEMORY;
  }
  *m = (nvm_mem){.memfd = fd, .view = v, .size = size};
  return NVS_OK;
}

static void obj_release(nvm_obj *o) {
  if (o->chan >= 0) nvm_chan_drop(o->gpu, o->chan);
  if (is_mem(o->cls)) nvm_ranges_drop_mem(o);
  if (o->mem.memfd >= 0) {
    munmap(o->mem.view, o->mem.size);
    close(o->mem.memfd);
    if (o->cls == NVC_MEMORY_USER && o->gpu >= 0) S.gpu[o->gpu].vram_used -= o->mem.size;
  }
  for (int i = 0; i < NVM_MAX_FDS; i++)
    if (S.fds[i].kind && S.fds[i].map_obj == o) {
      S.fds[i].map_obj = NULL;
      S.fds[i].map_pending = false;
    }
}

/* Free o and everything under it (children first). */
static void free_tree(nvm_obj *o) {
  bool again = true;
  while (again) {
    again = false;
    for (nvm_obj *c = S.objs; c; c = c->next)
      if (c != o && c->client == o->client && c->parent == o->handle && c->cls != NVC_ROOT_CLIENT) {
        free_tree(c);
        again = true;
        break;
      }
  }
  for (nvm_obj **pp = &S.objs; *pp; pp = &(*pp)->next)
    if (*pp == o) {
      *pp = o->next;
      break;
    }
  obj_release(o);
  free(o);
}

void nvm_objs_free_all(void) {
  while (S.objs) {
    nvm_obj *o = S.objs;
    S.objs = o->next;
    obj_release(o);
    free(o);
  }
}

/* NV_MEMORY_ALLOCATION_PARAMS: type @4, flags @8, attr @24, attr2 @28, size @64, alignment @72, limit @88. */
static uint32_t alloc_memory_obj(nvm_obj *o, const uint8_t *p) {
  uint64_t size = nvm_g64(p, 64);
  uint32_t attr = nvm_g32(p, 24), attr2 = nvm_g32(p, 28);
  /* NVOS32_ATTR_PAGE_SIZE 24:23 (3 = HUGE) with NVOS32_ATTR2_PAGE_SIZE_HUGE 21:20 (1 = 2MB) */
  bool huge = ((attr >> 23) & 3) == 3;
  if (size == 0) return NVS_ERR_INVALID_ARGUMENT;
  if (huge && (((attr2 >> 20) & 3) != 1 || size % (2u << 20))) return NVS_ERR_INVALID_ARGUMENT;
  if (o->cls == NVC_MEMORY_USER && S.gpu[o->gpu].vram_used + size > NVM_VRAM_BUDGET) return NVS_ERR_NO_MEMORY;
  uint32_t st = mem_back(&o->mem, size, o->cls == NVC_MEMORY_USER ? "nv-vidmem" : "nv-sysmem");
  if (st) return st;
  o->huge = huge;
  if (o->cls == NVC_MEMORY_USER) S.gpu[o->gpu].vram_used += size;
  return NVS_OK;
}

/* NV_CHANNEL_ALLOC_PARAMS (570/580): hObjectError @0, hObjectBuffer @4, gpFifoOffset @8, gpFifoEntries @16,
 * hContextShare @24, hUserdMemory[0] @32, userdOffset[0] @64. */
static uint32_t alloc_channel(nvm_obj *o, const uint8_t *p) {
  nvm_obj *cs = nvm_obj_find(o->client, nvm_g32(p, 24));
  if (!cs || cs->cls != NVC_CTXSHARE || cs->parent != o->parent) return NVS_ERR_INVALID_OBJECT_HANDLE;
  nvm_obj *buf = nvm_obj_find(o->client, nvm_g32(p, 4)), *userd = nvm_obj_find(o->client, nvm_g32(p, 32));
  if (!buf || !is_mem(buf->cls) || !userd || !is_mem(userd->cls)) return NVS_ERR_INVALID_OBJECT_HANDLE;
  uint32_t entries = nvm_g32(p, 16);
  uint64_t ring_va = nvm_g64(p, 8), uoff = nvm_g64(p, 64);
  if (entries < 2 || (entries & (entries - 1))) return NVS_ERR_INVALID_ARGUMENT;
  /* The ring's VA must lie in a GPU mapping of hObjectBuffer (the GPU fetches entries through its MMU). */
  uint8_t *ring = nvm_va(o->gpu, ring_va, (uint64_t)entries * 8);
  if (!ring || ring < buf->mem.view || ring + (uint64_t)entries * 8 > buf->mem.view + buf->mem.size)
    return NVS_ERR_INVALID_OFFSET;
  if (uoff + 0x200 > userd->mem.size || uoff % 0x200) return NVS_ERR_INVALID_OFFSET; /* USERD: 512-byte aligned */
  /* hObjectError: where RM reports the channel's teardown (16-byte NvNotification entries; 0 = none). */
  nvm_obj *err = nvm_g32(p, 0) ? nvm_obj_find(o->client, nvm_g32(p, 0)) : NULL;
  if (nvm_g32(p, 0) && (!err || !is_mem(err->cls))) return NVS_ERR_INVALID_OBJECT_HANDLE;
  if (err && err->mem.size < 16) return NVS_ERR_INVALID_ARGUMENT;
  int ch = nvm_chan_new(o->gpu, o, ring, ring_va, entries, userd->mem.view + uoff);
  if (ch < 0) return NVS_ERR_NO_MEMORY;
  S.gpu[o->gpu].chan[ch].notifier = err ? err->mem.view : NULL;
  o->chan = ch;
  return NVS_OK;
}

int nvm_rm_alloc(nvm_fd *f, void *arg) {
  (void)f;
  uint8_t *a = arg;
  uint32_t hroot = nvm_g32(a, 0), hparent = nvm_g32(a, 4), hnew = nvm_g32(a, 8), cls = nvm_g32(a, 12);
  uint64_t params = nvm_g64(a, 16);
  uint32_t psize = nvm_g32(a, 24);
  uint8_t *p = (uint8_t *)(uintptr_t)params;
#define DONE(st)             \
  do {                       \
    nvm_p32(a, 28, (st));    \
    return 0;                \
  } while (0)
  const class_rule *r = rule_of(cls);
  if (!r) DONE(NVS_ERR_INVALID_CLASS);
  if (!p && !r->optional) DONE(NVS_ERR_INVALID_ARGUMENT);
  if ((p && psize != r->size) || (!p && psize != 0) || (p && r->size == 0)) DONE(NVS_ERR_INVALID_ARGUMENT);
  if (cls == NVC_ROOT_CLIENT) {
    if (hnew == 0) {
      while (nvm_obj_find(S.next_client, S.next_client)) S.next_client++;
      hnew = S.next_client++;
    } else {
      for (nvm_obj *o = S.objs; o; o = o->next)
        if (o->cls == NVC_ROOT_CLIENT && o->handle == hnew) DONE(NVS_ERR_INSERT_DUPLICATE_NAME);
    }
    if (!new_obj(hnew, hnew, 0, cls, -1)) DONE(NVS_ERR_NO_MEMORY);
    nvm_p32(a, 8, hnew);
    DONE(NVS_OK);
  }
  nvm_obj *client = nvm_obj_find(hroot, hroot);
  if (!client || client->cls != NVC_ROOT_CLIENT) DONE(NVS_ERR_INVALID_OBJECT_PARENT); /* hRoot: a client */
  nvm_obj *parent = nvm_obj_find(hroot, hparent);
  if (!parent || parent->cls != r->parent) DONE(NVS_ERR_INVALID_OBJECT_PARENT);
  if (hnew == 0) hnew = gen_handle(hroot);
  else if (nvm_obj_find(hroot, hnew)) DONE(NVS_ERR_INSERT_DUPLICATE_NAME);
  int gpu = parent->gpu;
  if (cls == NVC_DEVICE) {
    uint32_t dev = nvm_g32(p, 0);
    if (dev >= (uint32_t)S.count) DONE(NVS_ERR_INVALID_ARGUMENT); /* deviceId: a device instance */
    gpu = (int)dev;
  }
  if (cls == NVC_SUBDEVICE && p && nvm_g32(p, 0) != 0) DONE(NVS_ERR_INVALID_ARGUMENT); /* one subdevice */
  if (cls == NVC_CTXSHARE) {
    nvm_obj *va = nvm_obj_find(hroot, nvm_g32(p, 0));
    if (nvm_g32(p, 0) && (!va || va->cls != NVC_VASPACE)) DONE(NVS_ERR_INVALID_OBJECT_HANDLE);
  }
  if (cls == S.cfg->compute || cls == S.cfg->copy) { /* one engine object per channel */
    for (nvm_obj *o = S.objs; o; o = o->next)
      if (o->client == hroot && o->parent == hparent && (o->cls == S.cfg->compute || o->cls == S.cfg->copy))
        DONE(NVS_ERR_INVALID_STATE);
  }
  if (cls == NVC_DEBUGGER) {
    nvm_obj *eng = nvm_obj_find(hroot, nvm_g32(p, 8)); /* hClass3dObject: the compute object */
    if (nvm_g32(p, 4) != hroot || !eng || eng->cls != S.cfg->compute) DONE(NVS_ERR_INVALID_OBJECT_HANDLE);
  }
  nvm_obj *o = new_obj(hroot, hnew, hparent, cls, gpu);
  if (!o) DONE(NVS_ERR_NO_MEMORY);
  uint32_t st = NVS_OK;
  if (cls == NVC_MEMORY_USER || cls == NVC_MEMORY_SYSTEM) st = alloc_memory_obj(o, p);
  else if (is_usermode(cls)) st = mem_back(&o->mem, 0x10000, "nv-usermode");
  else if (cls == NVC_MEMORY_VIRTUAL) {
    o->va_start = nvm_g64(p, 0);
    o->va_limit = nvm_g64(p, 8);
  } else if (cls == S.cfg->gpfifo) st = alloc_channel(o, p);
  else if (cls == S.cfg->compute || cls == S.cfg->copy) {
    nvm_obj *ch = parent;
    if (ch->chan >= 0) S.gpu[ch->gpu].chan[ch->chan].x.cls_engine = cls;
    ch->engine_obj_cls = cls;
  }
  if (st) {
    free_tree(o);
    DONE(st);
  }
  nvm_p32(a, 8, hnew);
  DONE(NVS_OK);
#undef DONE
}

int nvm_rm_free(nvm_fd *f, void *arg) {
  (void)f;
  uint8_t *a = arg;
  uint32_t hroot = nvm_g32(a, 0), hparent = nvm_g32(a, 4), hold = nvm_g32(a, 8);
  nvm_obj *o = nvm_obj_find(hroot, hold);
  uint32_t st = NVS_OK;
  if (!o) st = NVS_ERR_OBJECT_NOT_FOUND;
  else if (o->cls == NVC_ROOT_CLIENT) {
    /* The client: every object of it goes. */
    bool again = true;
    while (again) {
      again = false;
      for (nvm_obj *c = S.objs; c; c = c->next)
        if (c->client == hroot && c != o) {
          free_tree(c);
          again = true;
          break;
        }
    }
    free_tree(o);
  } else if (o->parent != hparent) st = NVS_ERR_INVALID_OBJECT_PARENT;
  else free_tree(o);
  nvm_p32(a, 12, st);
  return 0;
}

/* nv_ioctl_nvos33_parameters_with_fd: hClient @0, hDevice @4, hMemory @8, offset @16, length @24,
 * pLinearAddress @32, status @40, flags @44, fd @48. */
int nvm_rm_map_memory(nvm_fd *f, void *arg) {
  (void)f;
  uint8_t *a = arg;
  uint32_t hc = nvm_g32(a, 0);
  nvm_obj *dev = nvm_obj_find(hc, nvm_g32(a, 4)), *m = nvm_obj_find(hc, nvm_g32(a, 8));
  uint64_t off = nvm_g64(a, 16), len = nvm_g64(a, 24);
  nvm_fd *target = nvm_fd_get((int)nvm_g32(a, 48));
  uint32_t st = NVS_OK;
  if (!dev || dev->cls != NVC_DEVICE) st = NVS_ERR_INVALID_OBJECT_HANDLE;
  else if (!m || m->mem.memfd < 0 || (!is_mem(m->cls) && !is_usermode(m->cls))) st = NVS_ERR_INVALID_OBJECT_HANDLE;
  else if (len == 0 || off + len > m->mem.size || off % 4096) st = NVS_ERR_INVALID_LIMIT;
  else if (!target || target->kind == NVM_FD_UVM) st = NVS_ERR_INVALID_ARGUMENT;
  else if (target->kind == NVM_FD_DEV && target->registered_ctl < 0) st = NVS_ERR_INVALID_ARGUMENT; /* REGISTER_FD first */
  else {
    target->map_pending = true;
    target->map_obj = m;
    target->map_offset = off;
    target->map_length = len;
    nvm_p64(a, 32, off); /* pLinearAddress: an opaque offset for the mmap of that fd */
  }
  nvm_p32(a, 40, st);
  return 0;
}

/* NVOS34_PARAMETERS: hClient @0, hDevice @4, hMemory @8, pLinearAddress @16, status @24. */
int nvm_rm_unmap_memory(nvm_fd *f, void *arg) {
  (void)f;
  uint8_t *a = arg;
  nvm_obj *m = nvm_obj_find(nvm_g32(a, 0), nvm_g32(a, 8));
  nvm_p32(a, 24, m && m->mem.memfd >= 0 ? NVS_OK : NVS_ERR_INVALID_OBJECT_HANDLE);
  return 0;
}

/* NVOS46_PARAMETERS (580): hClient @0, hDevice @4, hDma @8, hMemory @12, offset @16, length @24, flags @32,
 * flags2 @36, kindOverride @40, dmaOffset @48, status @56. Only NVOS46_FLAGS_DMA_OFFSET_FIXED (bit 15) mappings:
 * the GPU VA is the driver's (the mapping the GPU uses comes from UVM_MAP_EXTERNAL_ALLOCATION). */
int nvm_rm_map_dma(nvm_fd *f, void *arg) {
  (void)f;
  uint8_t *a = arg;
  uint32_t hc = nvm_g32(a, 0);
  nvm_obj *dma = nvm_obj_find(hc, nvm_g32(a, 8)), *m = nvm_obj_find(hc, nvm_g32(a, 12));
  uint64_t off = nvm_g64(a, 16), len = nvm_g64(a, 24), va = nvm_g64(a, 48);
  uint32_t flags = nvm_g32(a, 32), st = NVS_OK;
  if (!dma || dma->cls != NVC_MEMORY_VIRTUAL) st = NVS_ERR_INVALID_OBJECT_HANDLE;
  else if (!m || !is_mem(m->cls)) st = NVS_ERR_INVALID_OBJECT_HANDLE;
  else if (len == 0 || off + len > m->mem.size) st = NVS_ERR_INVALID_LIMIT;
  else if (!(flags & (1u << 15))) st = NVS_ERR_NOT_SUPPORTED;
  else if (va % 4096 || va < dma->va_start || va + len - 1 > dma->va_limit) st = NVS_ERR_INVALID_OFFSET;
  nvm_p32(a, 56, st);
  return 0;
}

/* nv_ioctl_nvos02_parameters_with_fd: hRoot @0, hObjectParent @4, hObjectNew @8, hClass @12, flags @16,
 * pMemory @24, limit @32, status @40, fd @48. NV01_MEMORY_SYSTEM_OS_DESCRIPTOR: the driver's host range. */
int nvm_rm_alloc_memory(nvm_fd *f, void *arg) {
  (void)f;
  uint8_t *a = arg;
  uint32_t hroot = nvm_g32(a, 0), hparent = nvm_g32(a, 4), hnew = nvm_g32(a, 8), cls = nvm_g32(a, 12);
  uint64_t ptr = nvm_g64(a, 24), limit = nvm_g64(a, 32);
  uint32_t st = NVS_OK;
  nvm_obj *parent = nvm_obj_find(hroot, hparent);
  if (cls != NVC_OS_DESCRIPTOR) st = NVS_ERR_INVALID_CLASS;
  else if (!nvm_obj_find(hroot, hroot) || !parent || parent->cls != NVC_DEVICE) st = NVS_ERR_INVALID_OBJECT_PARENT;
  else if (hnew && nvm_obj_find(hroot, hnew)) st = NVS_ERR_INSERT_DUPLICATE_NAME;
  else if (!ptr || ptr % 4096 || (limit + 1) % 4096) st = NVS_ERR_INVALID_ADDRESS;
  else {
    if (!hnew) hnew = gen_handle(hroot);
    nvm_obj *o = new_obj(hroot, hnew, hparent, cls, parent->gpu);
    if (!o) st = NVS_ERR_NO_MEMORY;
    else {
      o->mem = (nvm_mem){.memfd = -1, .view = (uint8_t *)(uintptr_t)ptr, .size = limit + 1};
      nvm_p32(a, 8, hnew);
    }
  }
  nvm_p32(a, 40, st);
  return 0;
}
