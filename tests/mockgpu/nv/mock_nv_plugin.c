/* tests/mockgpu/nv/mock_nv_plugin.c: the emulated nvidia kernel module's system-call table (nv/nv_sys.h) and
 * its configurations (MOCKGPU_NV=hopper|ada, MOCKGPU_COUNT).
 *
 * Device nodes are virtual fds: dup()s of an O_PATH descriptor of /dev/null, so their numbers never collide with
 * the process's real fds. ioctl requests on /dev/nvidiactl and /dev/nvidia<N> are the frontend escapes
 * _IOWR('F', nr, size) (kernel-open/common/inc/nv-ioctl-numbers.h); the size encoded in the request must be the one
 * the 580 driver's escape expects, else EINVAL as kernel-open/nvidia/nv.c and arch/nvalloc/unix/src/escape.c
 * return. /dev/nvidia-uvm takes the raw UVM numbers (kernel-open/nvidia-uvm/uvm_ioctl.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "mock_nv_internal.h"

nvm_state nvm_S = {.lock = PTHREAD_MUTEX_INITIALIZER, .null_fd = -1};
#define S nvm_S

static const nvm_config CONFIGS[] = {
    {"hopper", NVC_HOPPER_COMPUTE_A, NVC_HOPPER_DMA_COPY_A, NVC_HOPPER_GPFIFO_A, NVC_HOPPER_USERMODE_A, 0x900, 4, 0x2335,
     "NVIDIA H200 (emulated)"},
    {"ada", NVC_ADA_COMPUTE_A, NVC_AMPERE_DMA_COPY_B, NVC_AMPERE_GPFIFO_A, NVC_TURING_USERMODE_A, 0x809, 3, 0x2684,
     "NVIDIA GeForce RTX 4090 (emulated)"},
};

void nvm_fail(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "mockgpu nv: %s\n", msg);
  size_t used = strlen(S.failures);
  if (used + strlen(msg) + 2 < sizeof S.failures) snprintf(S.failures + used, sizeof S.failures - used, "%s\n", msg);
  S.nfailures++;
}

unsigned mock_nv_failures(char *buf, size_t cap) {
  pthread_mutex_lock(&S.lock);
  unsigned n = S.nfailures;
  if (buf && cap) snprintf(buf, cap, "%s", S.failures);
  pthread_mutex_unlock(&S.lock);
  return n;
}
void mock_nv_clear_failures(void) {
  pthread_mutex_lock(&S.lock);
  S.failures[0] = 0;
  S.nfailures = 0;
  pthread_mutex_unlock(&S.lock);
}

uint64_t mock_nv_exec_ns(void) {
  pthread_mutex_lock(&S.lock);
  uint64_t v = S.exec_ns;
  pthread_mutex_unlock(&S.lock);
  return v;
}

/* ---------------- start / stop ---------------- */

int mock_nv_start(bg_mock_devices *out, char *err, size_t errlen) {
  const char *name = getenv("MOCKGPU_NV");
  const nvm_config *cfg = NULL;
  if (!name || !*name) name = "hopper";
  for (size_t i = 0; i < sizeof CONFIGS / sizeof CONFIGS[0]; i++)
    if (strcmp(name, CONFIGS[i].name) == 0) cfg = &CONFIGS[i];
  if (!cfg) {
    snprintf(err, errlen, "MOCKGPU_NV='%s': expected hopper or ada", name);
    return -BG_EINVAL;
  }
  const char *cs = getenv("MOCKGPU_COUNT");
  int count = 1;
  if (cs && *cs) {
    char *end;
    long v = strtol(cs, &end, 10);
    if (*end || v < 1 || v > BG_MOCK_MAX_DEVICES) {
      snprintf(err, errlen, "MOCKGPU_COUNT='%s': expected 1..%d", cs, BG_MOCK_MAX_DEVICES);
      return -BG_EINVAL;
    }
    count = (int)v;
  }
  pthread_mutex_lock(&S.lock);
  if (S.started) {
    int rc = 0;
    if (S.cfg != cfg || S.count != count) {
      snprintf(err, errlen, "the emulated NVIDIA GPUs run as MOCKGPU_NV=%s MOCKGPU_COUNT=%d; asked for %s and %d",
               S.cfg->name, S.count, cfg->name, count);
      rc = -BG_EINVAL;
    }
    if (!rc) {
      memset(out, 0, sizeof *out);
      out->count = count;
    }
    pthread_mutex_unlock(&S.lock);
    return rc;
  }
  S.null_fd = open("/dev/null", O_PATH | O_CLOEXEC);
  if (S.null_fd < 0) {
    pthread_mutex_unlock(&S.lock);
    snprintf(err, errlen, "open /dev/null: %s", strerror(errno));
    return -BG_EIO;
  }
  S.cfg = cfg;
  S.count = count;
  S.next_client = 0xc1d00000u; /* RS_CLIENT_HANDLE_BASE (resserv.h) */
  S.next_handle = 0xcaf00000u; /* RS_UNIQUE_HANDLE_BASE */
  S.failures[0] = 0;
  S.nfailures = 0;
  for (int i = 0; i < count; i++) {
    nvm_gpu *g = &S.gpu[i];
    memset(g, 0, sizeof *g);
    g->index = i;
    for (int k = 0; k < 16; k++) g->uuid[k] = (uint8_t)(0x40 + 16 * i + k);
    if (nvm_gpu_start(g)) {
      for (int j = 0; j < i; j++) nvm_gpu_stop(&S.gpu[j]);
      close(S.null_fd);
      S.null_fd = -1;
      pthread_mutex_unlock(&S.lock);
      snprintf(err, errlen, "cannot start the engine thread of GPU %d", i);
      return -BG_EIO;
    }
  }
  S.started = true;
  S.owner = getpid();
  memset(out, 0, sizeof *out);
  out->count = count;
  pthread_mutex_unlock(&S.lock);
  return 0;
}

void mock_nv_stop(void) {
  pthread_mutex_lock(&S.lock);
  if (!S.started || S.owner != getpid()) { /* a child's copy: the engine threads are the parent's */
    pthread_mutex_unlock(&S.lock);
    return;
  }
  S.started = false;
  pthread_mutex_unlock(&S.lock);
  for (int i = 0; i < S.count; i++) nvm_gpu_stop(&S.gpu[i]); /* joins: without the lock */
  pthread_mutex_lock(&S.lock);
  nvm_ranges_free_all();
  nvm_objs_free_all();
  nvm_qmd_cache_free();
  while (S.umaps) {
    nvm_umap *u = S.umaps;
    S.umaps = u->next;
    free(u);
  }
  for (int i = 0; i < NVM_MAX_FDS; i++)
    if (S.fds[i].kind) close(S.fds[i].fd);
  memset(S.fds, 0, sizeof S.fds);
  if (S.null_fd >= 0) close(S.null_fd);
  S.null_fd = -1;
  S.cfg = NULL;
  pthread_mutex_unlock(&S.lock);
}

const char *mock_nv_config_name(void) { return S.cfg ? S.cfg->name : NULL; }

/* ---------------- fds ---------------- */

nvm_fd *nvm_fd_get(int fd) {
  for (int i = 0; i < NVM_MAX_FDS; i++)
    if (S.fds[i].kind && S.fds[i].fd == fd) return &S.fds[i];
  return NULL;
}

static int sys_open(void *ctx, const char *path, int flags) {
  (void)ctx;
  (void)flags;
  int kind = 0, minor = -1;
  if (strcmp(path, "/dev/nvidiactl") == 0) kind = NVM_FD_CTL;
  else if (strcmp(path, "/dev/nvidia-uvm") == 0) kind = NVM_FD_UVM;
  else if (strncmp(path, "/dev/nvidia", 11) == 0 && path[11] >= '0' && path[11] <= '9') {
    char *end;
    long m = strtol(path + 11, &end, 10);
    if (!*end) {
      kind = NVM_FD_DEV;
      minor = (int)m;
    }
  }
  pthread_mutex_lock(&S.lock);
  if (!S.started || !kind || (kind == NVM_FD_DEV && minor >= S.count)) {
    pthread_mutex_unlock(&S.lock);
    errno = ENOENT;
    return -1;
  }
  int slot = -1;
  for (int i = 0; i < NVM_MAX_FDS && slot < 0; i++)
    if (!S.fds[i].kind) slot = i;
  int fd = slot < 0 ? -1 : fcntl(S.null_fd, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) {
    pthread_mutex_unlock(&S.lock);
    errno = EMFILE;
    return -1;
  }
  S.fds[slot] = (nvm_fd){.fd = fd, .kind = kind, .minor = minor, .registered_ctl = -1};
  pthread_mutex_unlock(&S.lock);
  return fd;
}

static int sys_close(void *ctx, int fd) {
  (void)ctx;
  pthread_mutex_lock(&S.lock);
  nvm_fd *f = nvm_fd_get(fd);
  if (!f) {
    pthread_mutex_unlock(&S.lock);
    errno = EBADF;
    return -1;
  }
  close(f->fd);
  memset(f, 0, sizeof *f);
  pthread_mutex_unlock(&S.lock);
  return 0;
}

/* _IOC fields (asm-generic/ioctl.h). */
#define IOC_NR(r) ((unsigned)((r)&0xff))
#define IOC_TYPE(r) ((unsigned)(((r) >> 8) & 0xff))
#define IOC_SIZE(r) ((unsigned)(((r) >> 16) & 0x3fff))

enum {
  ESC_ALLOC_MEMORY = 0x27, ESC_FREE = 0x29, ESC_CONTROL = 0x2a, ESC_ALLOC = 0x2b, ESC_MAP_MEMORY = 0x4e,
  ESC_UNMAP_MEMORY = 0x4f, ESC_MAP_MEMORY_DMA = 0x57, ESC_CARD_INFO = 200, ESC_REGISTER_FD = 201,
  ESC_CHECK_VERSION_STR = 210,
};

/* nv_ioctl_card_info_t (nv-ioctl.h): 72 bytes. */
static void card_info(void *arg, unsigned size) {
  memset(arg, 0, size);
  for (int i = 0; i < S.count && (unsigned)(i + 1) * 72 <= size; i++) {
    uint8_t *e = (uint8_t *)arg + 72 * i;
    e[0] = 1;                              /* valid */
    nvm_p32(e, 4, 0);                      /* pci_info.domain */
    e[8] = (uint8_t)(0x41 + i);            /* bus */
    uint16_t ven = 0x10de, dev = S.cfg->device_id;
    memcpy(e + 12, &ven, 2);
    memcpy(e + 14, &dev, 2);
    nvm_p32(e, 16, 0x4100u + 0x100u * (unsigned)i); /* gpu_id */
    nvm_p64(e, 48, NVM_VRAM_BUDGET);       /* fb_size */
    nvm_p32(e, 56, (uint32_t)i);           /* minor_number */
    memcpy(e + 60, "nvidia", 6); /* dev_name[10]: "nvidia<minor>", minor < 8 */
    e[66] = (uint8_t)('0' + i);
  }
}

/* nv_ioctl_rm_api_version_t: cmd @0, reply @4, versionString[64] @8 (osapi.c rm_perform_version_check). */
static int check_version(void *arg) {
  uint8_t *p = arg;
  if (nvm_g32(p, 0) == '2') { /* NV_RM_API_VERSION_CMD_QUERY */
    memset(p + 8, 0, 64);
    memcpy(p + 8, NVM_DRIVER_VERSION, strlen(NVM_DRIVER_VERSION));
    nvm_p32(p, 4, 1); /* NV_RM_API_VERSION_REPLY_RECOGNIZED */
    return 0;
  }
  char v[65];
  memcpy(v, p + 8, 64);
  v[64] = 0;
  nvm_p32(p, 4, strcmp(v, NVM_DRIVER_VERSION) == 0 ? 1 : 0);
  return strcmp(v, NVM_DRIVER_VERSION) == 0 ? 0 : EINVAL;
}

static int escape(nvm_fd *f, unsigned long request, void *arg) {
  unsigned nr = IOC_NR(request), size = IOC_SIZE(request);
  unsigned want = 0;
  switch (nr) {
  case ESC_ALLOC: case ESC_CONTROL: want = 32; break;  /* NVOS21 / NVOS54 */
  case ESC_FREE: want = 16; break;                     /* NVOS00 */
  case ESC_MAP_MEMORY: case ESC_ALLOC_MEMORY: want = 56; break; /* nvos33 / nvos02 with fd */
  case ESC_UNMAP_MEMORY: want = 32; break;             /* NVOS34 */
  case ESC_MAP_MEMORY_DMA: want = 64; break;           /* NVOS46 (580: flags2, kindOverride) */
  case ESC_REGISTER_FD: want = 4; break;
  case ESC_CHECK_VERSION_STR: want = 72; break;
  case ESC_CARD_INFO: want = size && size % 72 == 0 ? size : 72 * 64; break;
  default: return EINVAL; /* unknown escape: nv.c rm_ioctl -> -EINVAL */
  }
  if (IOC_TYPE(request) != 'F' || size != want) return EINVAL;
  if (!arg) return EFAULT;
  /* RM escapes other than ALLOC_MEMORY act on the control device only (escape.c NV_CTL_DEVICE_ONLY). */
  bool ctl_only = nr == ESC_ALLOC || nr == ESC_CONTROL || nr == ESC_FREE || nr == ESC_MAP_MEMORY ||
                  nr == ESC_UNMAP_MEMORY || nr == ESC_MAP_MEMORY_DMA;
  if (ctl_only && f->kind != NVM_FD_CTL) {
    static const unsigned status_off[256] = {[ESC_ALLOC] = 28, [ESC_CONTROL] = 28, [ESC_FREE] = 12,
                                             [ESC_MAP_MEMORY] = 40, [ESC_UNMAP_MEMORY] = 24, [ESC_MAP_MEMORY_DMA] = 56};
    nvm_p32(arg, status_off[nr], NVS_ERR_INVALID_ARGUMENT);
    return 0;
  }
  switch (nr) {
  case ESC_ALLOC: return nvm_rm_alloc(f, arg);
  case ESC_CONTROL: return nvm_rm_control(f, arg);
  case ESC_FREE: return nvm_rm_free(f, arg);
  case ESC_MAP_MEMORY: return nvm_rm_map_memory(f, arg);
  case ESC_UNMAP_MEMORY: return nvm_rm_unmap_memory(f, arg);
  case ESC_MAP_MEMORY_DMA: return nvm_rm_map_dma(f, arg);
  case ESC_ALLOC_MEMORY:
    if (f->kind != NVM_FD_DEV) { /* tinygrad ops_nv.py sends it on /dev/nvidiaN: so does the driver */
      nvm_p32(arg, 40, NVS_ERR_INVALID_ARGUMENT);
      return 0;
    }
    return nvm_rm_alloc_memory(f, arg);
  case ESC_CARD_INFO:
    if (f->kind != NVM_FD_CTL) return EINVAL;
    card_info(arg, size);
    return 0;
  case ESC_REGISTER_FD: {
    int ctl = (int)nvm_g32(arg, 0);
    nvm_fd *c = nvm_fd_get(ctl);
    if (f->kind != NVM_FD_DEV || !c || c->kind != NVM_FD_CTL) return EINVAL;
    f->registered_ctl = ctl;
    return 0;
  }
  case ESC_CHECK_VERSION_STR: return check_version(arg);
  }
  return EINVAL;
}

static int sys_ioctl(void *ctx, int fd, unsigned long request, void *arg) {
  (void)ctx;
  pthread_mutex_lock(&S.lock);
  nvm_fd *f = nvm_fd_get(fd);
  int rc;
  if (!f) rc = EBADF;
  else if (f->kind == NVM_FD_UVM) rc = arg ? nvm_uvm_ioctl(f, request, arg) : EFAULT;
  else rc = escape(f, request, arg);
  pthread_mutex_unlock(&S.lock);
  if (rc) {
    errno = rc;
    return -1;
  }
  return 0;
}

/* ---------------- mmap ---------------- */

static void *sys_mmap(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  (void)ctx;
  if (fd < 0 || (flags & MAP_ANONYMOUS)) return mmap(addr, len, prot, flags, fd, off);
  pthread_mutex_lock(&S.lock);
  nvm_fd *f = nvm_fd_get(fd);
  void *r = MAP_FAILED;
  int e = EINVAL;
  if (!f) e = EBADF;
  else if (f->map_pending && off >= 0 && (uint64_t)off + len <= f->map_length && (flags & MAP_SHARED)) {
    nvm_obj *o = f->map_obj;
    r = mmap(addr, len, prot, flags, o->mem.memfd, (off_t)(f->map_offset + (uint64_t)off));
    e = errno;
    if (r != MAP_FAILED && (o->cls == NVC_TURING_USERMODE_A || o->cls == NVC_HOPPER_USERMODE_A)) {
      nvm_umap *u = calloc(1, sizeof *u);
      if (u) {
        *u = (nvm_umap){.addr = r, .len = len, .gpu = o->gpu, .next = S.umaps};
        S.umaps = u;
      }
    }
    if (r != MAP_FAILED) f->map_pending = false; /* one mmap per NV_ESC_RM_MAP_MEMORY (nv-mmap.c mmap_context) */
  }
  pthread_mutex_unlock(&S.lock);
  if (r == MAP_FAILED) errno = e;
  return r;
}

static int sys_munmap(void *ctx, void *addr, size_t len) {
  (void)ctx;
  pthread_mutex_lock(&S.lock);
  for (nvm_umap **pp = &S.umaps; *pp;) {
    nvm_umap *u = *pp;
    if (u->addr >= (uint8_t *)addr && u->addr < (uint8_t *)addr + len) {
      *pp = u->next;
      free(u);
    } else pp = &u->next;
  }
  pthread_mutex_unlock(&S.lock);
  return munmap(addr, len);
}

static long sys_read_file(void *ctx, const char *path, char *buf, size_t cap) {
  (void)ctx;
  if (strcmp(path, "/proc/driver/nvidia/version") != 0) {
    errno = ENOENT;
    return -1;
  }
  if (!cap) {
    errno = EINVAL;
    return -1;
  }
  /* The kernel module's /proc text (kernel-open/nvidia/nv-procfs.c nv_procfs_read_version). */
  int n = snprintf(buf, cap,
                   "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  " NVM_DRIVER_VERSION
                   "  Release Build  (baregpu mockgpu)  Tue Dec  1 00:00:00 UTC 2026\n"
                   "GCC version:  gcc version 13.2.0\n");
  return n < 0 ? -1 : (long)((size_t)n < cap ? (size_t)n : cap - 1);
}

/* A doorbell: reg must be usermode + 0x90 (NVC361_NOTIFY_CHANNEL_PENDING) of a usermode mapping the model handed out,
 * and token the work-submit token of one of that GPU's channels. */
static void sys_doorbell(void *ctx, volatile uint32_t *reg, uint32_t token) {
  (void)ctx;
  pthread_mutex_lock(&S.lock);
  nvm_umap *u = S.umaps;
  while (u && u->addr + 0x90 != (volatile uint8_t *)reg) u = u->next;
  if (!u) {
    nvm_fail("doorbell at %p: not the NOTIFY_CHANNEL_PENDING register (+0x90) of a usermode mapping", (void *)reg);
    pthread_mutex_unlock(&S.lock);
    return;
  }
  nvm_gpu *g = &S.gpu[u->gpu];
  bool ok = false;
  for (int i = 0; i < NVM_MAX_CHANNELS; i++)
    if (g->chan[i].used && g->chan[i].token == token) ok = true;
  if (!ok) nvm_fail("doorbell on GPU %d: token 0x%x is no channel's work-submit token", u->gpu, token);
  else {
    *reg = token; /* the page keeps what was stored, as a register read would show */
    nvm_gpu_kick(g);
  }
  pthread_mutex_unlock(&S.lock);
}

static const bg_nv_sys SYS = {
    .ctx = NULL, .open = sys_open, .close = sys_close, .ioctl = sys_ioctl, .mmap = sys_mmap,
    .munmap = sys_munmap, .read_file = sys_read_file, .doorbell = sys_doorbell,
};

int mock_nv_plugin_sys(const bg_nv_sys **out, char *err, size_t errlen) {
  pthread_mutex_lock(&S.lock);
  bool started = S.started;
  pthread_mutex_unlock(&S.lock);
  if (!started) {
    *out = NULL;
    snprintf(err, errlen, "the emulated NVIDIA GPUs are not started (start(\"MOCKNVK\", \"NV\") first)");
    return -BG_EINVAL;
  }
  *out = &SYS;
  return 0;
}
