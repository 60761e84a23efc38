/* platform/sysmem.c: DMA-able host memory and pagemap translation (platform/sysmem.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "util/fd_io.h"
#include "platform/sysmem.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << MAP_HUGE_SHIFT)
#endif

/* /proc/<pid>/pagemap entry (Documentation/admin-guide/mm/pagemap.rst). */
#define PM_PRESENT (1ull << 63)
#define PM_PFN_MASK ((1ull << 55) - 1)

const char *bg_sysmem_proc_root(void) {
  const char *r = getenv("BG_PROC_ROOT");
  return r && *r ? r : "/proc";
}

const char *bg_sysmem_pagemap_path(void) {
  static _Thread_local char path[PATH_MAX];
  const char *p = getenv("BG_PAGEMAP");
  if (p && *p) return p;
  snprintf(path, sizeof(path), "%s/self/pagemap", bg_sysmem_proc_root());
  return path;
}

unsigned long bg_sysmem_free_hugepages(void) {
  char path[PATH_MAX], line[128];
  snprintf(path, sizeof(path), "%s/meminfo", bg_sysmem_proc_root());
  int fd;
  if (bg_open_regular(path, O_RDONLY, &fd) < 0) return 0; /* never blocks on a FIFO (util/fd_io.h) */
  FILE *f = fdopen(fd, "r");
  if (!f) {
    close(fd);
    return 0;
  }
  unsigned long n = 0;
  while (fgets(line, sizeof(line), f))
    if (sscanf(line, "HugePages_Free: %lu", &n) == 1) break;
  fclose(f);
  return n;
}

/* Locked pages may still be migrated by compaction unless this sysctl is 0; a moved page would
 * leave the device writing to a stale physical address. Done once, best effort (needs root). */
static void compaction_off(void) {
  char path[PATH_MAX];
  snprintf(path, sizeof(path), "%s/sys/vm/compact_unevictable_allowed", bg_sysmem_proc_root());
  int fd;
  char c = 0;
  if (bg_open_regular(path, O_RDWR, &fd) < 0) {
    BG_LOG(1, "sysmem: %s: locked DMA pages may be migrated by compaction", bg_last_error());
  } else if (pread(fd, &c, 1, 0) != 1) {
    BG_LOG(1, "sysmem: cannot read %s (%s): locked DMA pages may be migrated by compaction", path, strerror(errno));
  } else if (c != '0' && pwrite(fd, "0\n", 2, 0) != 2) {
    BG_LOG(1, "sysmem: cannot write 0 to %s (%s): locked DMA pages may be migrated by compaction", path,
           strerror(errno));
  } else if (c != '0') {
    BG_LOG(1, "sysmem: wrote 0 to %s so compaction leaves locked DMA pages in place", path);
  }
  if (fd >= 0) close(fd);
}

static void pin_against_compaction(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, compaction_off);
}

int bg_sysmem_lock(void *va, uint64_t size) {
  if (mlock(va, size) == 0) return 0;
  int e = errno;
  struct rlimit rl = {0, 0};
  getrlimit(RLIMIT_MEMLOCK, &rl);
  char lim[32];
  if (rl.rlim_cur == RLIM_INFINITY) snprintf(lim, sizeof(lim), "unlimited");
  else snprintf(lim, sizeof(lim), "%llu bytes", (unsigned long long)rl.rlim_cur);
  return bg_error(e == EPERM ? BG_EPERM : BG_ENOMEM,
                  "sysmem: mlock of %llu bytes at %p failed: %s (RLIMIT_MEMLOCK is %s: raise it with ulimit -l, "
                  "or run as root)", (unsigned long long)size, va, strerror(e), lim);
}

/* mmap with or without 2 MiB pages; NULL + errno on failure. */
static void *map_pages(uint64_t len, void *fixed_va, bool huge) {
  int fl = MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE | (fixed_va ? MAP_FIXED : 0);
  if (huge) fl |= MAP_HUGETLB | MAP_HUGE_2MB;
  void *p = mmap(fixed_va, len, PROT_READ | PROT_WRITE, fl, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static int huge_unavailable(uint64_t size, int e) {
  return bg_error(BG_ENOMEM,
                  "sysmem: contiguous allocation of %llu bytes needs a 2 MiB hugepage, and mmap(MAP_HUGETLB) "
                  "failed: %s (%lu free in %s/meminfo; reserve some: echo 16 > /proc/sys/vm/nr_hugepages)",
                  (unsigned long long)size, strerror(e), bg_sysmem_free_hugepages(), bg_sysmem_proc_root());
}

int bg_sysmem_map(uint64_t size, unsigned flags, void *fixed_va, bg_sysmem *out) {
  memset(out, 0, sizeof(*out));
  if (size == 0 || size > (1ull << 46))
    return bg_error(BG_EINVAL, "sysmem: bad allocation size %llu", (unsigned long long)size);
  uint64_t len = (size + BG_SYSMEM_PAGE - 1) & ~(uint64_t)(BG_SYSMEM_PAGE - 1);
  if ((uintptr_t)fixed_va % BG_SYSMEM_PAGE)
    return bg_error(BG_EINVAL, "sysmem: fixed address %p is not 4 KiB aligned", fixed_va);
  bool contig = (flags & BG_SYSMEM_CONTIGUOUS) != 0;
  if (contig && len > BG_SYSMEM_HUGE_PAGE)
    return bg_error(BG_EINVAL, "sysmem: contiguous allocation of %llu bytes exceeds one 2 MiB hugepage",
                    (unsigned long long)size);
  /* One 4 KiB page is contiguous by itself; anything larger needs a hugepage. */
  bool huge = contig ? len > BG_SYSMEM_PAGE : (flags & BG_SYSMEM_HUGE) != 0;
  uint64_t hlen = (len + BG_SYSMEM_HUGE_PAGE - 1) & ~(uint64_t)(BG_SYSMEM_HUGE_PAGE - 1);
  if (huge && (uintptr_t)fixed_va % BG_SYSMEM_HUGE_PAGE)
    return bg_error(BG_EINVAL, "sysmem: fixed address %p of a hugepage allocation is not 2 MiB aligned", fixed_va);
  void *p = huge ? map_pages(hlen, fixed_va, true) : NULL;
  if (huge && !p) {
    int e = errno;
    if (contig) return huge_unavailable(size, e);
    BG_LOG(1, "sysmem: no 2 MiB pages for %llu bytes (%s): using 4 KiB pages", (unsigned long long)size, strerror(e));
    huge = false;
  }
  if (!huge) p = map_pages(len, fixed_va, false);
  if (!p) {
    int e = errno;
    return bg_error(e == ENOMEM ? BG_ENOMEM : BG_EINVAL, "sysmem: mmap of %llu bytes%s failed: %s",
                    (unsigned long long)len, fixed_va ? " at a fixed address" : "", strerror(e));
  }
  out->map_base = p;
  out->map_size = huge ? hlen : len;
  out->huge = huge;
  int r = bg_sysmem_lock(p, out->map_size);
  if (r < 0) {
    bg_sysmem_free(out);
    return r;
  }
  /* A fork child must not share or copy-on-write these pages: the device keeps their addresses. */
  if (madvise(p, out->map_size, MADV_DONTFORK) != 0)
    BG_LOG(1, "sysmem: madvise(MADV_DONTFORK) failed: %s", strerror(errno));
  out->size = len;
  out->npages = len / BG_SYSMEM_PAGE;
  out->view = (bg_mmio){(volatile uint8_t *)p, len, NULL, NULL};
  out->bus = calloc(out->npages, sizeof(uint64_t));
  if (!out->bus) {
    bg_sysmem_free(out);
    return bg_error(BG_ENOMEM, "sysmem: out of memory for %zu bus addresses", (size_t)(len / BG_SYSMEM_PAGE));
  }
  return 0;
}

void bg_sysmem_free(bg_sysmem *m) {
  if (m->map_base) munmap(m->map_base, m->map_size);
  free(m->bus);
  memset(m, 0, sizeof(*m));
}

int bg_sysmem_translate(const void *va, size_t npages, uint64_t *bus) {
  const char *path = bg_sysmem_pagemap_path();
  if ((uintptr_t)va % BG_SYSMEM_PAGE) return bg_error(BG_EINVAL, "pagemap: address %p is not page-aligned", va);
  /* Only addresses from the real pagemap can go stale through compaction. */
  if (!getenv("BG_PAGEMAP")) pin_against_compaction();
  int fd;
  if (bg_open_regular(path, O_RDONLY, &fd) < 0) { /* a FIFO as BG_PAGEMAP: refused, not waited on */
    int e = errno;
    if (e == 0) return bg_error_context(-BG_EIO, "pagemap: ");
    return bg_error(e == EACCES || e == EPERM ? BG_EPERM : BG_ENOTSUP, "pagemap: cannot open %s: %s%s", path,
                    strerror(e), e == EACCES || e == EPERM ? ": run as root" : "");
  }
  uint64_t first = (uintptr_t)va / BG_SYSMEM_PAGE;
  int r = 0;
  size_t done = 0;
  while (r == 0 && done < npages) {
    uint64_t ent[512];
    size_t k = npages - done < 512 ? npages - done : 512;
    ssize_t got = pread(fd, ent, k * 8, (off_t)((first + done) * 8));
    if (got != (ssize_t)(k * 8)) {
      r = bg_error(BG_EIO, "pagemap: short read of %s at entry 0x%llx: %s", path, (unsigned long long)(first + done),
                   got < 0 ? strerror(errno) : "end of file");
      break;
    }
    for (size_t i = 0; i < k && r == 0; i++) {
      const void *pva = (const uint8_t *)va + (done + i) * BG_SYSMEM_PAGE;
      if (!(ent[i] & PM_PRESENT))
        r = bg_error(BG_EIO, "pagemap: page at %p is not present (entry 0x%016llx in %s): memory not locked?", pva,
                     (unsigned long long)ent[i], path);
      else if ((ent[i] & PM_PFN_MASK) == 0)
        r = bg_error(BG_EPERM, "pagemap: %s reports frame 0 for present page %p: reading physical addresses needs "
                     "CAP_SYS_ADMIN (run as root)", path, pva);
      else if ((ent[i] & PM_PFN_MASK) > UINT64_MAX / BG_SYSMEM_PAGE) /* the address would wrap (to 0 at 1 << 52) */
        r = bg_error(BG_EIO, "pagemap: entry 0x%016llx of page %p in %s: frame number 0x%llx is beyond a 64-bit "
                     "address", (unsigned long long)ent[i], pva, path, (unsigned long long)(ent[i] & PM_PFN_MASK));
      else
        bus[done + i] = (ent[i] & PM_PFN_MASK) * BG_SYSMEM_PAGE;
    }
    done += k;
  }
  close(fd);
  return r;
}

int bg_sysmem_check_contiguous(const uint64_t *bus, size_t npages, uint64_t align, const char *what) {
  if (npages == 0) return 0;
  if (align && bus[0] % align)
    return bg_error(BG_EIO, "sysmem: %s starts at bus address 0x%llx, not aligned to 0x%llx", what,
                    (unsigned long long)bus[0], (unsigned long long)align);
  for (size_t i = 1; i < npages; i++)
    if (bus[i] != bus[0] + i * BG_SYSMEM_PAGE)
      return bg_error(BG_EIO, "sysmem: %s is not physically contiguous: page %zu at 0x%llx, expected 0x%llx", what, i,
                      (unsigned long long)bus[i], (unsigned long long)(bus[0] + i * BG_SYSMEM_PAGE));
  return 0;
}

/* Hugepages must map whole, aligned 2 MiB frames: otherwise the kernel is not giving us what
 * MAP_HUGETLB promises and the device's 2 MiB mappings would be wrong. */
int bg_sysmem_check_layout(const bg_sysmem *m, unsigned flags) {
  const size_t per = BG_SYSMEM_HUGE_PAGE / BG_SYSMEM_PAGE;
  if (m->huge)
    for (size_t i = 0; i < m->npages; i += per) {
      size_t k = m->npages - i < per ? m->npages - i : per;
      int r = bg_sysmem_check_contiguous(m->bus + i, k, BG_SYSMEM_HUGE_PAGE, "a 2 MiB hugepage");
      if (r < 0) return r;
    }
  if (flags & BG_SYSMEM_CONTIGUOUS)
    return bg_sysmem_check_contiguous(m->bus, m->npages, 0, "contiguous allocation");
  return 0;
}

int bg_sysmem_alloc(uint64_t size, unsigned flags, void *fixed_va, bg_sysmem *out) {
  int r = bg_sysmem_map(size, flags, fixed_va, out);
  if (r < 0) return r;
  r = bg_sysmem_translate(out->map_base, out->npages, out->bus);
  if (r == 0) r = bg_sysmem_check_layout(out, flags);
  if (r < 0) bg_sysmem_free(out);
  return r;
}
