/* tests/mockgpu/mock_vfio.c: the emulated VFIO container, group and vfio-pci device (mock_vfio.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/vfio.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "platform/pci_regs.h"
#include "platform/vfio_sys.h"
#include "util/fd_io.h"
#include "mock_internal.h"
#include "mock_vfio.h"

#define PAGE 4096ull
#define MAX_FILES 64
/* Linux VFIO_PCI_INDEX_TO_OFFSET: region i of a vfio-pci device fd starts at i << 40. */
#define REGION_SHIFT 40
/* x86 IOMMUs reserve the MSI window for interrupts (Linux drivers/iommu/intel/iommu.c IOAPIC_RANGE_START/END). */
#define MSI_WINDOW_START 0xfee00000ull
#define MSI_WINDOW_END 0xfeefffffull
#define offsetofend(T, f) (offsetof(T, f) + sizeof(((T *)0)->f))
#define MAX_IOVA_RANGES 32
/* 4 KiB, 2 MiB and 1 GiB pages, as a VT-d second-level table has. */
#define DEFAULT_PGSIZES 0x40201000ull
/* vfio_iommu_type1.c: dma_entry_limit defaults to U16_MAX; DIRTY_BITMAP_SIZE_MAX for the migration capability. */
#define DEFAULT_DMA_ENTRY_LIMIT 65535u
#define DIRTY_BITMAP_SIZE_MAX (((0x7fffffffull + 63) / 64) * 8)

typedef struct mv_map {
  uint64_t iova, size;
  uint8_t *va;
} mv_map;

typedef struct mv_container {
  int refs;       /* the container file and each attached group */
  int ngroups;
  bool noiommu;   /* groups attached are no-IOMMU ones */
  uint32_t iommu; /* VFIO_TYPE1v2_IOMMU, VFIO_TYPE1_IOMMU, VFIO_NOIOMMU_IOMMU; 0 unset */
  mv_map *maps;
  size_t nmaps, cap;
  /* Type1, from SET_IOMMU (MOCKGPU_VFIO_IOVA, MOCKGPU_VFIO_PGSIZES, the dma_entry_limit parameter): the valid IOVA
   * ranges (inclusive), whether GET_INFO reports capabilities, the page sizes, the mappings still allowed. */
  struct vfio_iova_range iova[MAX_IOVA_RANGES];
  size_t niova;
  bool caps;
  uint64_t pgsizes;
  uint32_t dma_avail;
} mv_container;

typedef struct mv_group {
  int id, refs;   /* refs: the group file and each device fd (Linux: device fds hold the group file) */
  bool noiommu;
  mv_container *c;
} mv_group;

typedef enum mv_kind { MV_CONTAINER, MV_GROUP, MV_DEVICE } mv_kind;

typedef struct mv_file {
  int fd;
  mv_kind kind;
  mv_container *c;  /* MV_CONTAINER */
  mv_group *g;      /* MV_GROUP, MV_DEVICE */
  mock_pci *m;      /* MV_DEVICE */
  const void *domain; /* MV_DEVICE: its type1 container (fixed while it is open: UNSET_CONTAINER is EBUSY), or NULL */
  int irq_type;     /* VFIO_PCI_INTX_IRQ_INDEX, VFIO_PCI_MSI_IRQ_INDEX; -1 none */
  int trigger;      /* the driver's eventfd (dup'd), -1 none */
  bool masked, pending;
} mv_file;

struct mock_vfio {
  mv_file *files[MAX_FILES];
  pthread_mutex_t lock;        /* ioctls and interrupts (test threads raise them) */
  pthread_mutex_t files_lock;  /* the files array: GPU engine threads look up their device's domain on each DMA */
};

static mock_vfio *state(mock_sysfs *t) {
  if (!t->vfio) {
    t->vfio = calloc(1, sizeof(*t->vfio));
    if (t->vfio) {
      pthread_mutex_init(&t->vfio->lock, NULL);
      pthread_mutex_init(&t->vfio->files_lock, NULL);
    }
  }
  return t->vfio;
}

static mv_file *find(mock_sysfs *t, int fd) {
  mock_vfio *s = state(t);
  mv_file *f = NULL;
  if (!s) return NULL;
  pthread_mutex_lock(&s->files_lock);
  for (int i = 0; i < MAX_FILES && !f; i++)
    if (s->files[i] && s->files[i]->fd == fd) f = s->files[i];
  pthread_mutex_unlock(&s->files_lock);
  return f;
}

static int add_file(mock_sysfs *t, mv_file *f) {
  mock_vfio *s = state(t);
  if (!s) return -ENOMEM;
  int r = -EMFILE;
  pthread_mutex_lock(&s->files_lock);
  for (int i = 0; r && i < MAX_FILES; i++)
    if (!s->files[i]) {
      s->files[i] = f;
      r = 0;
    }
  pthread_mutex_unlock(&s->files_lock);
  return r;
}

static void drop_file(mock_sysfs *t, mv_file *f) {
  pthread_mutex_lock(&t->vfio->files_lock);
  for (int i = 0; i < MAX_FILES; i++)
    if (t->vfio->files[i] == f) t->vfio->files[i] = NULL;
  pthread_mutex_unlock(&t->vfio->files_lock);
  free(f);
}

/* ---------------- containers and groups ---------------- */

static void container_put(mock_sysfs *t, mv_container *c) {
  if (--c->refs > 0) return;
  for (size_t i = 0; i < c->nmaps; i++) mock_sysfs_dma_del(t, c, c->maps[i].iova);
  free(c->maps);
  free(c);
}

/* The last group leaving takes the IOMMU backend and its mappings with it (Linux container.c
 * __vfio_group_unset_container). */
static void group_detach(mock_sysfs *t, mv_group *g) {
  mv_container *c = g->c;
  if (!c) return;
  g->c = NULL;
  if (--c->ngroups == 0) {
    for (size_t i = 0; i < c->nmaps; i++) mock_sysfs_dma_del(t, c, c->maps[i].iova);
    c->nmaps = 0;
    c->iommu = 0;
  }
  container_put(t, c);
}

static void group_put(mock_sysfs *t, mv_group *g) {
  if (--g->refs > 0) return;
  group_detach(t, g);
  free(g);
}

static bool in_group(const mock_pci *m, int id) { return !m->gone && m->cfg.iommu_group == id; }

/* Viable: no device of the group bound to a driver that owns DMA (Linux iommu_group_dma_owner_claimed; vfio-pci and
 * pcieport do not claim it). */
static bool viable(mock_sysfs *t, int id) {
  for (size_t i = 0; i < t->ndevs; i++) {
    const mock_pci *m = t->devs[i];
    if (in_group(m, id) && m->driver[0] && strcmp(m->driver, "vfio-pci") != 0 && strcmp(m->driver, "pcieport") != 0)
      return false;
  }
  return true;
}

static int container_ioctl(mock_sysfs *t, mv_file *f, unsigned long req, unsigned long arg);
static int group_ioctl(mock_sysfs *t, mv_file *f, unsigned long req, unsigned long arg);
static int device_ioctl(mock_sysfs *t, mv_file *f, unsigned long req, unsigned long arg);

/* ---------------- system calls ---------------- */

static int mv_open(void *ctx, const char *path, int oflags) {
  mock_sysfs *t = ctx;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  int fd;
  if (bg_open_file(path, oflags & ~O_CLOEXEC, BG_FT_REG, &fd) < 0) return errno ? -errno : -EMEDIUMTYPE;
  mv_file *f = calloc(1, sizeof(*f));
  if (!f) {
    close(fd);
    return -ENOMEM;
  }
  *f = (mv_file){.fd = fd, .irq_type = -1, .trigger = -1};
  int id = -1, r = 0;
  if (strcmp(base, "vfio") == 0) {
    f->kind = MV_CONTAINER;
    f->c = calloc(1, sizeof(*f->c));
    if (!f->c) r = -ENOMEM;
    else f->c->refs = 1;
  } else if (sscanf(base, "noiommu-%d", &id) == 1 || sscanf(base, "%d", &id) == 1) {
    f->kind = MV_GROUP;
    /* Linux group.c: "Do we need multiple instances of the group open?  Seems not." */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) r = -EBUSY;
    else if (!(f->g = calloc(1, sizeof(*f->g)))) r = -ENOMEM;
    else *f->g = (mv_group){id, 1, strncmp(base, "noiommu-", 8) == 0, NULL};
  } else {
    r = -ENODEV;
  }
  if (r == 0 && (r = add_file(t, f)) == 0) return fd;
  if (f->c) free(f->c);
  free(f->g);
  free(f);
  close(fd);
  return r;
}

static void irq_off(mv_file *f) {
  if (f->trigger >= 0) close(f->trigger);
  f->trigger = -1;
  f->irq_type = -1;
  f->masked = f->pending = false;
}

static void mv_close(void *ctx, int fd) {
  mock_sysfs *t = ctx;
  mv_file *f = find(t, fd);
  if (!f) {
    mock_fail(t, "vfio: close of fd %d that is no emulated VFIO file", fd);
    return;
  }
  pthread_mutex_lock(&t->vfio->lock);
  if (f->kind == MV_CONTAINER) container_put(t, f->c);
  if (f->kind == MV_DEVICE) {
    /* vfio_pci_core_disable: interrupts off, bus mastering off. */
    irq_off(f);
    f->m->config[BG_PCI_COMMAND] &= (uint8_t)~BG_PCI_COMMAND_MASTER;
  }
  if (f->g) group_put(t, f->g);
  close(fd);
  drop_file(t, f);
  pthread_mutex_unlock(&t->vfio->lock);
}

static int mv_ioctl(void *ctx, int fd, unsigned long req, unsigned long arg) {
  mock_sysfs *t = ctx;
  mv_file *f = find(t, fd);
  if (!f) return -EBADF;
  pthread_mutex_lock(&t->vfio->lock);
  int r = f->kind == MV_CONTAINER ? container_ioctl(t, f, req, arg)
          : f->kind == MV_GROUP   ? group_ioctl(t, f, req, arg)
                                  : device_ioctl(t, f, req, arg);
  pthread_mutex_unlock(&t->vfio->lock);
  return r;
}

/* ---------------- container ---------------- */

static bool noiommu_enabled(mock_sysfs *t) {
  char path[PATH_MAX], buf[4] = "";
  if (mock_path(t, "module/vfio/parameters/enable_unsafe_noiommu_mode", path) != 0) return false;
  FILE *fp = fopen(path, "r");
  if (!fp) return false;
  size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
  fclose(fp);
  return n > 0 && (buf[0] == 'Y' || buf[0] == '1');
}

/* What a backend answers (vfio_iommu_type1 check_extension, vfio_noiommu_ops). */
static int extension(mock_sysfs *t, uint32_t iommu, unsigned long ext) {
  bool type1 = ext == VFIO_TYPE1_IOMMU || ext == VFIO_TYPE1v2_IOMMU;
  if (iommu == VFIO_NOIOMMU_IOMMU) return ext == VFIO_NOIOMMU_IOMMU;
  if (iommu) return type1;
  return type1 || (ext == VFIO_NOIOMMU_IOMMU && noiommu_enabled(t));
}

/* ---------------- the type1 IOMMU: IOVA ranges, page sizes, the mapping limit ---------------- */

/* x86 with a width-bit IOMMU: everything below 2^width but the MSI window. */
static void iova_x86(mv_container *c, unsigned width) {
  c->iova[0] = (struct vfio_iova_range){0, MSI_WINDOW_START - 1};
  c->iova[1] = (struct vfio_iova_range){MSI_WINDOW_END + 1, width >= 64 ? UINT64_MAX : (1ull << width) - 1};
  c->niova = 2;
}

/* MOCKGPU_VFIO_IOVA (tests/mockgpu/README.md): unset: 48 bits; <width> (32..64): that many bits, the MSI window
 * reserved; <start>-<end>[,<start>-<end>...] (inclusive, ascending, C integer syntax): exactly those ranges; none:
 * a kernel before 5.4 (GET_INFO reports no capabilities; MAP_DMA still refuses the MSI window). */
static void iova_config(mock_sysfs *t, mv_container *c) {
  const char *v = getenv("MOCKGPU_VFIO_IOVA");
  iova_x86(c, 48);
  c->caps = true;
  if (!v || !*v) return;
  if (strcmp(v, "none") == 0) {
    c->caps = false;
    return;
  }
  char *end;
  if (!strchr(v, '-')) {
    unsigned long w = strtoul(v, &end, 10);
    if (*end || w < 32 || w > 64) mock_fail(t, "vfio: MOCKGPU_VFIO_IOVA=%s: expected a width of 32..64 bits", v);
    else iova_x86(c, (unsigned)w);
    return;
  }
  size_t n = 0;
  for (const char *p = v; n < MAX_IOVA_RANGES;) {
    struct vfio_iova_range r;
    r.start = strtoull(p, &end, 0);
    if (end == p || *end != '-') break;
    p = end + 1;
    r.end = strtoull(p, &end, 0);
    if (end == p || (*end && *end != ',') || r.end < r.start || (n && r.start <= c->iova[n - 1].end)) break;
    c->iova[n++] = r;
    if (!*end) {
      c->niova = n;
      return;
    }
    p = end + 1;
  }
  mock_fail(t, "vfio: MOCKGPU_VFIO_IOVA=%s: expected ascending start-end ranges, at most %d", v, MAX_IOVA_RANGES);
  iova_x86(c, 48);
}

/* SET_IOMMU to type1: the ranges, page sizes and dma_avail = the dma_entry_limit parameter (vfio_iommu_type1_open). */
static void type1_open(mock_sysfs *t, mv_container *c) {
  iova_config(t, c);
  const char *ps = getenv("MOCKGPU_VFIO_PGSIZES");
  c->pgsizes = ps && *ps ? strtoull(ps, NULL, 0) & ~(PAGE - 1) : DEFAULT_PGSIZES;
  if (!c->pgsizes) {
    mock_fail(t, "vfio: MOCKGPU_VFIO_PGSIZES=%s: expected a bitmap of page sizes of 4 KiB or more", ps);
    c->pgsizes = DEFAULT_PGSIZES;
  }
  c->dma_avail = DEFAULT_DMA_ENTRY_LIMIT;
  char path[PATH_MAX];
  FILE *fp = mock_path(t, "module/vfio_iommu_type1/parameters/dma_entry_limit", path) == 0 ? fopen(path, "r") : NULL;
  if (fp) {
    char buf[32] = "";
    if (fgets(buf, sizeof(buf), fp)) c->dma_avail = (uint32_t)strtoul(buf, NULL, 10);
    fclose(fp);
  }
}

/* Appends a capability of size bytes (a header first) to the chain in buf, 8-byte aligned as vfio_info_cap_add
 * does; next offsets count from the start of the info struct, as after vfio_info_cap_shift. */
static size_t cap_add(uint8_t *buf, size_t len, size_t *last, const void *cap, size_t size) {
  size_t at = len;
  memcpy(buf + at, cap, size);
  if (at) {
    struct vfio_info_cap_header h;
    memcpy(&h, buf + *last, sizeof(h));
    h.next = (uint32_t)(sizeof(struct vfio_iommu_type1_info) + at);
    memcpy(buf + *last, &h, sizeof(h));
  }
  *last = at;
  return at + ((size + 7) & ~(size_t)7);
}

/* vfio_iommu_type1_get_info: argsz below the page sizes is EINVAL; the flags and page sizes always; the capability
 * chain (migration, DMA available, IOVA ranges) only when argsz leaves room for all of it, else argsz is set to what
 * it needs and cap_offset stays 0; only min(argsz, sizeof(info)) bytes of the struct are written. */
static int get_info(const mv_container *c, struct vfio_iommu_type1_info *info) {
  if (info->argsz < offsetofend(struct vfio_iommu_type1_info, iova_pgsizes)) return -EINVAL;
  struct vfio_iommu_type1_info out = {.argsz = info->argsz, .flags = VFIO_IOMMU_INFO_PGSIZES,
                                      .iova_pgsizes = c->pgsizes};
  uint8_t caps[96 + MAX_IOVA_RANGES * sizeof(struct vfio_iova_range)];
  size_t len = 0, last = 0;
  if (c->caps) {
    struct vfio_iommu_type1_info_cap_migration mig = {
      .header = {.id = VFIO_IOMMU_TYPE1_INFO_CAP_MIGRATION, .version = 1},
      .pgsize_bitmap = c->pgsizes & -c->pgsizes, .max_dirty_bitmap_size = DIRTY_BITMAP_SIZE_MAX};
    len = cap_add(caps, len, &last, &mig, sizeof(mig));
    struct vfio_iommu_type1_info_dma_avail avail = {.header = {.id = VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL, .version = 1},
                                                    .avail = c->dma_avail};
    len = cap_add(caps, len, &last, &avail, sizeof(avail));
    struct vfio_iommu_type1_info_cap_iova_range r = {.header = {.id = VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE,
                                                                .version = 1}, .nr_iovas = (uint32_t)c->niova};
    memcpy(caps + len + sizeof(r), c->iova, c->niova * sizeof(c->iova[0]));
    len = cap_add(caps, len, &last, &r, sizeof(r));
    len += c->niova * sizeof(c->iova[0]);
  }
  if (len) {
    out.flags |= VFIO_IOMMU_INFO_CAPS;
    if (info->argsz < sizeof(out) + len) {
      out.argsz = (uint32_t)(sizeof(out) + len);
    } else {
      memcpy((uint8_t *)info + sizeof(out), caps, len);
      out.cap_offset = sizeof(out);
    }
  }
  memcpy(info, &out, info->argsz < sizeof(out) ? info->argsz : sizeof(out));
  return 0;
}

/* vfio_iommu_iova_dma_valid: [start, last] inside one range. */
static bool iova_valid(const mv_container *c, uint64_t start, uint64_t last) {
  for (size_t i = 0; i < c->niova; i++)
    if (start >= c->iova[i].start && last <= c->iova[i].end) return true;
  return false;
}

/* vfio_dma_do_map, in its order: argsz and flags, alignment to the smallest IOMMU page, wrap-around, overlap
 * (EEXIST), no mapping left (ENOSPC), outside the IOVA ranges (EINVAL), pinning. */
static int map_dma(mock_sysfs *t, mv_container *c, struct vfio_iommu_type1_dma_map *m) {
  if (m->argsz < offsetofend(struct vfio_iommu_type1_dma_map, size) ||
      m->flags & ~(uint32_t)(VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE | VFIO_DMA_MAP_FLAG_VADDR))
    return -EINVAL;
  uint64_t pgsize = c->pgsizes & -c->pgsizes;
  if (!(m->flags & (VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE)) || !m->size ||
      (m->size | m->iova | m->vaddr) & (pgsize - 1))
    return -EINVAL;
  if (m->iova + m->size - 1 < m->iova || m->vaddr + m->size - 1 < m->vaddr) return -EINVAL;
  uint64_t last = m->iova + m->size - 1;
  for (size_t i = 0; i < c->nmaps; i++)
    if (m->iova < c->maps[i].iova + c->maps[i].size && c->maps[i].iova <= last) return -EEXIST;
  if (!c->dma_avail) return -ENOSPC;
  if (!iova_valid(c, m->iova, last)) return -EINVAL;
  /* Pinning the pages fails on an address with nothing mapped (msync: ENOMEM). */
  if (msync((void *)(uintptr_t)m->vaddr, m->size, MS_ASYNC) != 0) return -EFAULT;
  if (c->nmaps == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 16;
    mv_map *nm = realloc(c->maps, cap * sizeof(*nm));
    if (!nm) return -ENOMEM;
    c->maps = nm;
    c->cap = cap;
  }
  int r = mock_sysfs_dma_add(t, c, m->iova, (void *)(uintptr_t)m->vaddr, m->size / PAGE);
  if (r < 0) return r;
  c->maps[c->nmaps++] = (mv_map){m->iova, m->size, (uint8_t *)(uintptr_t)m->vaddr};
  c->dma_avail--;
  return 0;
}

static int unmap_dma(mock_sysfs *t, mv_container *c, struct vfio_iommu_type1_dma_unmap *u) {
  if (u->argsz < offsetofend(struct vfio_iommu_type1_dma_unmap, size) || u->flags & ~(uint32_t)VFIO_DMA_UNMAP_FLAG_ALL)
    return -EINVAL;
  bool all = u->flags & VFIO_DMA_UNMAP_FLAG_ALL;
  if (all ? u->iova || u->size : !u->size || (u->size | u->iova) & (PAGE - 1) || u->iova + u->size - 1 < u->iova)
    return -EINVAL;
  uint64_t last = all ? UINT64_MAX : u->iova + u->size - 1, done = 0;
  /* type1v2: a mapping may not be bisected. */
  for (size_t i = 0; i < c->nmaps; i++) {
    const mv_map *p = &c->maps[i];
    bool overlaps = u->iova < p->iova + p->size && p->iova <= last;
    if (overlaps && (p->iova < u->iova || p->iova + p->size - 1 > last)) return -EINVAL;
  }
  for (size_t i = 0; i < c->nmaps;) {
    if (c->maps[i].iova >= u->iova && c->maps[i].iova <= last) {
      done += c->maps[i].size;
      mock_sysfs_dma_del(t, c, c->maps[i].iova);
      c->maps[i] = c->maps[--c->nmaps];
      c->dma_avail++;
    } else {
      i++;
    }
  }
  u->size = done;
  return 0;
}

static int container_ioctl(mock_sysfs *t, mv_file *f, unsigned long req, unsigned long arg) {
  mv_container *c = f->c;
  switch (req) {
  case VFIO_GET_API_VERSION: return VFIO_API_VERSION;
  case VFIO_CHECK_EXTENSION: return extension(t, c->iommu, arg);
  case VFIO_SET_IOMMU:
    /* Linux container.c vfio_ioctl_set_iommu: only with a group attached, and only once. */
    if (c->ngroups == 0 || c->iommu) return -EINVAL;
    if (!extension(t, 0, arg) || (arg == VFIO_NOIOMMU_IOMMU) != c->noiommu) return -ENODEV;
    c->iommu = (uint32_t)arg;
    if (arg != VFIO_NOIOMMU_IOMMU) type1_open(t, c);
    return 0;
  case VFIO_IOMMU_GET_INFO:
    if (c->iommu != VFIO_TYPE1v2_IOMMU && c->iommu != VFIO_TYPE1_IOMMU) return -ENOTTY;
    return get_info(c, (struct vfio_iommu_type1_info *)arg);
  case VFIO_IOMMU_MAP_DMA:
  case VFIO_IOMMU_UNMAP_DMA:
    /* Without a backend, or with the no-IOMMU one, there is nothing to map into (ENOTTY). */
    if (c->iommu != VFIO_TYPE1v2_IOMMU && c->iommu != VFIO_TYPE1_IOMMU) return -ENOTTY;
    return req == VFIO_IOMMU_MAP_DMA ? map_dma(t, c, (struct vfio_iommu_type1_dma_map *)arg)
                                     : unmap_dma(t, c, (struct vfio_iommu_type1_dma_unmap *)arg);
  default: return -ENOTTY;
  }
}

/* ---------------- group ---------------- */

static mock_pci *group_device(mock_sysfs *t, int id, const char *name) {
  for (size_t i = 0; i < t->ndevs; i++)
    if (in_group(t->devs[i], id) && strcmp(t->devs[i]->bdf, name) == 0) return t->devs[i];
  return NULL;
}

/* vfio_pci_core_enable: pci_enable_device, then a function reset when the device has a method. */
static void device_enable(mock_pci *m) {
  m->enabled = true;
  uint8_t cmd = m->config[BG_PCI_COMMAND] | BG_PCI_COMMAND_MEMORY;
  mock_pci_config_written(m, BG_PCI_COMMAND, &cmd, 1);
  if (!m->cfg.no_reset) mock_pci_reset_written(m, "1");
}

static int get_device_fd(mock_sysfs *t, mv_file *f, const char *name) {
  mv_group *g = f->g;
  if (!g->c || !g->c->iommu || !viable(t, g->id)) return -EINVAL;
  mock_pci *m = group_device(t, g->id, name);
  if (!m || strcmp(m->driver, "vfio-pci") != 0) return -ENODEV;
  int fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return -errno;
  mv_file *d = calloc(1, sizeof(*d));
  if (!d) {
    close(fd);
    return -ENOMEM;
  }
  *d = (mv_file){.fd = fd, .kind = MV_DEVICE, .g = g, .m = m, .irq_type = -1, .trigger = -1,
                 .domain = g->c->iommu == VFIO_NOIOMMU_IOMMU ? NULL : g->c};
  int r = add_file(t, d);
  if (r < 0) {
    free(d);
    close(fd);
    return r;
  }
  g->refs++;
  device_enable(m);
  return fd;
}

static int group_ioctl(mock_sysfs *t, mv_file *f, unsigned long req, unsigned long arg) {
  mv_group *g = f->g;
  switch (req) {
  case VFIO_GROUP_GET_STATUS: {
    struct vfio_group_status *st = (struct vfio_group_status *)arg;
    if (st->argsz < offsetofend(struct vfio_group_status, flags)) return -EINVAL;
    st->flags = g->c ? VFIO_GROUP_FLAGS_CONTAINER_SET | VFIO_GROUP_FLAGS_VIABLE
                     : viable(t, g->id) ? VFIO_GROUP_FLAGS_VIABLE : 0;
    return 0;
  }
  case VFIO_GROUP_SET_CONTAINER: {
    int cfd = *(const int *)arg;
    mv_file *cf = cfd >= 0 ? find(t, cfd) : NULL;
    if (!cf || cf->kind != MV_CONTAINER || g->c) return -EINVAL;
    if (cf->c->iommu && cf->c->noiommu != g->noiommu) return -EPERM;
    if (!viable(t, g->id)) return -EBUSY;  /* iommu_group_claim_dma_owner */
    if (cf->c->ngroups == 0) cf->c->noiommu = g->noiommu;
    else if (cf->c->noiommu != g->noiommu) return -EPERM;
    g->c = cf->c;
    g->c->ngroups++;
    g->c->refs++;
    return 0;
  }
  case VFIO_GROUP_UNSET_CONTAINER:
    if (!g->c) return -EINVAL;
    if (g->refs > 1) return -EBUSY;  /* a device fd is open */
    group_detach(t, g);
    return 0;
  case VFIO_GROUP_GET_DEVICE_FD: return get_device_fd(t, f, (const char *)arg);
  default: return -ENOTTY;
  }
}

/* ---------------- device ---------------- */

static uint32_t msi_cap(const mock_pci *m) {
  if (!(m->config[BG_PCI_STATUS] & BG_PCI_STATUS_CAP_LIST)) return 0;
  uint32_t p = m->config[BG_PCI_CAPABILITY_LIST] & ~3u;
  for (int i = 0; i < 48 && p >= 0x40; i++) {
    if (m->config[p] == BG_PCI_CAP_ID_MSI) return p;
    p = m->config[p + 1] & ~3u;
  }
  return 0;
}

/* vfio_pci_get_irq_count. */
static uint32_t irq_count(const mock_pci *m, unsigned index) {
  switch (index) {
  case VFIO_PCI_INTX_IRQ_INDEX: return m->config[BG_PCI_INTERRUPT_PIN] ? 1 : 0;
  case VFIO_PCI_MSI_IRQ_INDEX: {
    uint32_t p = msi_cap(m);
    return p ? 1u << ((m->config[p + 2] >> 1) & 7) : 0;
  }
  case VFIO_PCI_ERR_IRQ_INDEX:
  case VFIO_PCI_REQ_IRQ_INDEX: return 1;
  default: return 0;
  }
}

static int region_info(mock_pci *m, struct vfio_region_info *ri) {
  if (ri->argsz < offsetofend(struct vfio_region_info, offset)) return -EINVAL;
  if (ri->index >= VFIO_PCI_NUM_REGIONS) return -EINVAL;
  ri->offset = (uint64_t)ri->index << REGION_SHIFT;
  ri->size = 0;
  ri->flags = 0;
  ri->cap_offset = 0;
  if (ri->index == VFIO_PCI_CONFIG_REGION_INDEX) {
    ri->size = 4096;
    ri->flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
  } else if (ri->index <= VFIO_PCI_BAR5_REGION_INDEX && m->bar_size[ri->index]) {
    ri->size = m->bar_size[ri->index];
    ri->flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
    /* vfio_pci_probe_mmaps: memory BARs of at least a page are mmappable. */
    if (!m->cfg.bars[ri->index].io && ri->size >= PAGE) ri->flags |= VFIO_REGION_INFO_FLAG_MMAP;
  }
  return 0;
}

static void signal_fd(int fd) {
  uint64_t one = 1;
  if (write(fd, &one, sizeof(one)) != sizeof(one)) {}
}

static int set_irqs(mock_sysfs *t, mv_file *f, struct vfio_irq_set *s) {
  size_t minsz = offsetofend(struct vfio_irq_set, count);
  if (s->argsz < minsz || s->index >= VFIO_PCI_NUM_IRQS || s->count >= UINT32_MAX - s->start ||
      s->flags & ~(uint32_t)(VFIO_IRQ_SET_DATA_TYPE_MASK | VFIO_IRQ_SET_ACTION_TYPE_MASK))
    return -EINVAL;
  uint32_t max = irq_count(f->m, s->index), data = s->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
  if (s->start >= max || s->start + s->count > max) return -EINVAL;
  size_t size = data == VFIO_IRQ_SET_DATA_NONE ? 0 : data == VFIO_IRQ_SET_DATA_BOOL ? 1
              : data == VFIO_IRQ_SET_DATA_EVENTFD ? 4 : SIZE_MAX;
  if (size == SIZE_MAX) return -EINVAL;
  if (size && s->argsz - minsz < s->count * size) return -EINVAL;
  const uint8_t *payload = (const uint8_t *)s + sizeof(*s);
  uint32_t action = s->flags & VFIO_IRQ_SET_ACTION_TYPE_MASK;
  bool is_intx = s->index == VFIO_PCI_INTX_IRQ_INDEX, is_msi = s->index == VFIO_PCI_MSI_IRQ_INDEX;
  if (action == VFIO_IRQ_SET_ACTION_TRIGGER && (is_intx || is_msi)) {
    if (f->irq_type == (int)s->index && s->count == 0 && data == VFIO_IRQ_SET_DATA_NONE) {
      irq_off(f);
      return 0;
    }
    if (f->irq_type != -1 && f->irq_type != (int)s->index) return -EINVAL;  /* one interrupt type at a time */
    if ((is_intx && (s->start != 0 || s->count != 1)) || s->count == 0) return -EINVAL;
    if (data == VFIO_IRQ_SET_DATA_EVENTFD) {
      int32_t efd;
      memcpy(&efd, payload, sizeof(efd));
      if (efd < 0) {
        irq_off(f);
        return 0;
      }
      int dup_fd = fcntl(efd, F_DUPFD_CLOEXEC, 0);
      if (dup_fd < 0) return -EBADF;
      if (f->trigger >= 0) close(f->trigger);
      f->trigger = dup_fd;
      f->irq_type = (int)s->index;
      f->masked = f->pending = false;
      return 0;
    }
    if (f->irq_type != (int)s->index || f->trigger < 0) return -EINVAL;
    if (data == VFIO_IRQ_SET_DATA_NONE || payload[0]) signal_fd(f->trigger);  /* loopback trigger */
    return 0;
  }
  if ((action == VFIO_IRQ_SET_ACTION_MASK || action == VFIO_IRQ_SET_ACTION_UNMASK) && is_intx) {
    if (f->irq_type != VFIO_PCI_INTX_IRQ_INDEX || s->start != 0 || s->count != 1) return -EINVAL;
    if (data == VFIO_IRQ_SET_DATA_EVENTFD) {
      mock_fail(t, "vfio: %s: INTx %s through an eventfd (irqfd) is not modelled", f->m->bdf,
                action == VFIO_IRQ_SET_ACTION_MASK ? "mask" : "unmask");
      return -EINVAL;
    }
    if (data == VFIO_IRQ_SET_DATA_BOOL && !payload[0]) return 0;
    if (action == VFIO_IRQ_SET_ACTION_MASK) {
      f->masked = true;
    } else if (f->masked) {
      f->masked = false;
      if (f->pending) {
        f->pending = false;
        f->masked = true;
        signal_fd(f->trigger);
      }
    }
    return 0;
  }
  return -ENOTTY;  /* vfio_pci_set_irqs_ioctl: no handler for this index and action */
}

static int device_ioctl(mock_sysfs *t, mv_file *f, unsigned long req, unsigned long arg) {
  mock_pci *m = f->m;
  if (m->gone) return -ENODEV;
  switch (req) {
  case VFIO_DEVICE_GET_INFO: {
    struct vfio_device_info *info = (struct vfio_device_info *)arg;
    if (info->argsz < offsetofend(struct vfio_device_info, num_irqs)) return -EINVAL;
    info->flags = VFIO_DEVICE_FLAGS_PCI | (m->cfg.no_reset ? 0 : VFIO_DEVICE_FLAGS_RESET);
    info->num_regions = VFIO_PCI_NUM_REGIONS;
    info->num_irqs = VFIO_PCI_NUM_IRQS;
    return 0;
  }
  case VFIO_DEVICE_GET_REGION_INFO: return region_info(m, (struct vfio_region_info *)arg);
  case VFIO_DEVICE_GET_IRQ_INFO: {
    struct vfio_irq_info *ii = (struct vfio_irq_info *)arg;
    if (ii->argsz < offsetofend(struct vfio_irq_info, count) || ii->index >= VFIO_PCI_NUM_IRQS) return -EINVAL;
    ii->count = irq_count(m, ii->index);
    ii->flags = VFIO_IRQ_INFO_EVENTFD;
    if (ii->index == VFIO_PCI_INTX_IRQ_INDEX) ii->flags |= VFIO_IRQ_INFO_MASKABLE | VFIO_IRQ_INFO_AUTOMASKED;
    else ii->flags |= VFIO_IRQ_INFO_NORESIZE;
    return 0;
  }
  case VFIO_DEVICE_SET_IRQS: return set_irqs(t, f, (struct vfio_irq_set *)arg);
  case VFIO_DEVICE_RESET:
    if (m->cfg.no_reset) return -EINVAL;  /* vfio_pci_core: !vdev->reset_works */
    return mock_pci_reset_written(m, "1");
  default: return -ENOTTY;
  }
}

/* ---------------- regions: mmap, pread, pwrite ---------------- */

static mv_file *device_of(mock_sysfs *t, int fd) {
  mv_file *f = find(t, fd);
  return f && f->kind == MV_DEVICE && !f->m->gone ? f : NULL;
}

static int mv_mmap(void *ctx, int fd, uint64_t off, uint64_t size, bg_mmio *out) {
  mock_sysfs *t = ctx;
  mv_file *f = device_of(t, fd);
  if (!f) return -ENODEV;
  struct vfio_region_info ri = {.argsz = sizeof(ri), .index = (uint32_t)(off >> REGION_SHIFT)};
  uint64_t in = off & ((1ull << REGION_SHIFT) - 1);
  if (region_info(f->m, &ri) < 0 || !(ri.flags & VFIO_REGION_INFO_FLAG_MMAP) || in % PAGE || !size ||
      in > ri.size || size > ri.size - in)
    return -EINVAL;  /* vfio_pci_core_mmap */
  int r = mock_pci_map_cpu(f->m, (int)ri.index, in, size, out);
  if (r != 1) return r;
  /* An unemulated BAR: a plain mmap of the sparse resourceN file. */
  char rel[320], path[PATH_MAX];
  snprintf(rel, sizeof(rel), "%s/resource%u", f->m->dir, ri.index);
  int rfd = mock_path(t, rel, path) == 0 ? open(path, O_RDWR | O_CLOEXEC) : -1;
  if (rfd < 0) return -errno;
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, (off_t)in);
  int e = errno;
  close(rfd);
  if (p == MAP_FAILED) return -e;
  *out = (bg_mmio){p, size, NULL, NULL};
  return 0;
}

static void mv_munmap(void *ctx, bg_mmio *v) {
  (void)ctx;
  if (v->ops || v->ctx) mock_pci_unmap(v);
  else munmap((void *)v->ptr, v->size);
}

static ssize_t region_rw(mock_sysfs *t, int fd, void *buf, size_t n, uint64_t off, bool wr) {
  mv_file *f = device_of(t, fd);
  if (!f) return -ENODEV;
  struct vfio_region_info ri = {.argsz = sizeof(ri), .index = (uint32_t)(off >> REGION_SHIFT)};
  uint64_t in = off & ((1ull << REGION_SHIFT) - 1);
  if (region_info(f->m, &ri) < 0 || in >= ri.size || n > ri.size - in) return -EINVAL;
  if (ri.index == VFIO_PCI_CONFIG_REGION_INDEX) {
    if (wr) return mock_pci_config_written(f->m, in, buf, n) < 0 ? -EIO : (ssize_t)n;
    memcpy(buf, f->m->config + in, n);
    return (ssize_t)n;
  }
  bg_mmio v;
  int r = mock_pci_map_cpu(f->m, (int)ri.index, in, n, &v);
  if (r != 0) return r < 0 ? r : -EINVAL;
  r = wr ? bg_mmio_write(&v, 0, buf, n) : bg_mmio_read(&v, 0, buf, n);
  mock_pci_unmap(&v);
  return r < 0 ? -EIO : (ssize_t)n;
}

static ssize_t mv_pread(void *ctx, int fd, void *buf, size_t n, uint64_t off) {
  return region_rw(ctx, fd, buf, n, off, false);
}

static ssize_t mv_pwrite(void *ctx, int fd, const void *buf, size_t n, uint64_t off) {
  return region_rw(ctx, fd, (void *)buf, n, off, true);
}

const bg_vfio_sys mock_vfio_syscalls = {mv_open, mv_ioctl, mv_mmap, mv_munmap, mv_pread, mv_pwrite, mv_close};

/* ---------------- for tests ---------------- */

int mock_vfio_irq(mock_sysfs *t, const char *bdf) {
  mock_vfio *s = state(t);
  int r = -ENODEV;
  pthread_mutex_lock(&s->lock);
  for (int i = 0; i < MAX_FILES; i++) {
    mv_file *f = s->files[i];
    if (!f || f->kind != MV_DEVICE || strcmp(f->m->bdf, bdf) != 0) continue;
    r = 0;
    if (f->trigger < 0) break;  /* nobody listens: the interrupt is lost */
    if (f->irq_type == VFIO_PCI_INTX_IRQ_INDEX && f->masked) {
      f->pending = true;
      break;
    }
    signal_fd(f->trigger);
    f->masked = f->irq_type == VFIO_PCI_INTX_IRQ_INDEX;  /* VFIO_IRQ_INFO_AUTOMASKED */
    r = 1;
    break;
  }
  pthread_mutex_unlock(&s->lock);
  return r;
}

/* Called from GPU engine threads for each DMA: the files array changes under the lock. */
const void *mock_vfio_domain(mock_sysfs *t, const mock_pci *m) {
  const void *domain = NULL;
  if (!t->vfio) return NULL;
  pthread_mutex_lock(&t->vfio->files_lock);
  for (int i = 0; i < MAX_FILES && !domain; i++) {
    const mv_file *f = t->vfio->files[i];
    if (f && f->kind == MV_DEVICE && f->m == m) domain = f->domain;
  }
  pthread_mutex_unlock(&t->vfio->files_lock);
  return domain;
}

int mock_vfio_init(mock_sysfs *t) { return state(t) ? 0 : -ENOMEM; }

unsigned mock_vfio_open_files(const mock_sysfs *t) {
  unsigned n = 0;
  for (int i = 0; t->vfio && i < MAX_FILES; i++) n += t->vfio->files[i] != NULL;
  return n;
}

unsigned mock_vfio_dma_maps(const mock_sysfs *t) {
  unsigned n = 0;
  for (int i = 0; t->vfio && i < MAX_FILES; i++)
    if (t->vfio->files[i] && t->vfio->files[i]->kind == MV_CONTAINER) n += (unsigned)t->vfio->files[i]->c->nmaps;
  return n;
}

void mock_vfio_free(mock_sysfs *t) {
  if (!t->vfio) return;
  /* Devices first, then groups, then containers: the order their references allow. */
  for (int k = MV_DEVICE; k >= MV_CONTAINER; k--)
    for (int i = 0; i < MAX_FILES; i++)
      if (t->vfio->files[i] && (int)t->vfio->files[i]->kind == k) mv_close(t, t->vfio->files[i]->fd);
  pthread_mutex_destroy(&t->vfio->lock);
  pthread_mutex_destroy(&t->vfio->files_lock);
  free(t->vfio);
  t->vfio = NULL;
}
