/* cpu/cpu_program.c: loading CPU kernels from memory, told apart by e_type (contract C1 of issue 16):
 * - ET_DYN shared objects (bg_compile_c): the bytes go to a memfd that is dlopen'ed through /proc/self/fd, so
 *   nothing touches the filesystem;
 * - ET_REL relocatable objects (LLVM's in-process object emission): placed, relocated and protected by
 *   formats/host_obj.c in one mapping, no dynamic loader involved. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cpu/cpu.h"
#include "util/fd_io.h"

int bg_cpu_program_load(bg_dev *d, const void *bin, size_t size, const bg_program_info *info, void **handle) {
  (void)d;
  const char *name = info && info->name ? info->name : NULL;
  if (!name || !*name) return bg_error(BG_EINVAL, "cpu: program load without an entry name");
  if (!bin || size == 0) return bg_error(BG_EINVAL, "cpu: program '%s': empty binary", name);
  cpu_prog *p = calloc(1, sizeof(*p));
  if (!p) return bg_error(BG_ENOMEM, "cpu: program '%s': out of host memory", name);
  snprintf(p->name, sizeof(p->name), "%s", name);
  p->fd = -1;
  if (bg_host_obj_is_rel(bin, size)) {
    int r = bg_host_obj_load(bin, size, name, &p->obj);
    if (r < 0) {
      char why[512];   /* bg_error formats into the buffer bg_last_error returns */
      snprintf(why, sizeof(why), "%s", bg_last_error());
      r = bg_error(-r, "cpu: program '%s': %s", name, why);
      free(p);
      return r;
    }
    memcpy(&p->fn, &p->obj.entry, sizeof(p->fn));   /* POSIX: a code address is callable as a function */
    BG_LOG(2, "cpu: loaded program '%s' (%zu-byte relocatable object, %zu-byte image, %u stubs, %u GOT slots) entry %p",
           name, size, p->obj.size, p->obj.nstubs, p->obj.ngot, p->obj.entry);
    *handle = p;
    return 0;
  }
  char memname[80], path[64];
  snprintf(memname, sizeof(memname), "bg-cpu:%s", name);
  p->fd = memfd_create(memname, MFD_CLOEXEC);
  if (p->fd < 0) {
    int r = bg_error(BG_EIO, "cpu: program '%s': memfd_create: %s", name, strerror(errno));
    free(p);
    return r;
  }
  int e = bg_fd_write_all(p->fd, bin, size);
  if (e < 0) {
    close(p->fd);
    free(p);
    return bg_error(BG_EIO, "cpu: program '%s': writing its %zu-byte shared object to a memfd: %s", name, size,
                    strerror(-e));
  }
  /* The fd stays open while the library is loaded, so its path cannot name another library that
   * is still loaded (dlopen would return that one instead). */
  snprintf(path, sizeof(path), "/proc/self/fd/%d", p->fd);
  p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!p->dl) {
    const char *why = dlerror();
    int r = bg_error(BG_EFORMAT, "cpu: program '%s': dlopen of its %zu-byte shared object failed: %s", name, size,
                     why ? why : "unknown error");
    close(p->fd);
    free(p);
    return r;
  }
  dlerror();
  void *sym = dlsym(p->dl, name);
  if (!sym) {
    const char *why = dlerror();
    int r = bg_error(BG_EFORMAT, "cpu: program '%s': entry symbol not found in its shared object: %s", name,
                     why ? why : "symbol is NULL");
    dlclose(p->dl);
    close(p->fd);
    free(p);
    return r;
  }
  memcpy(&p->fn, &sym, sizeof(p->fn));   /* POSIX: dlsym's result is callable as a function */
  BG_LOG(2, "cpu: loaded program '%s' (%zu bytes) entry %p", name, size, sym);
  *handle = p;
  return 0;
}

void bg_cpu_program_free(bg_dev *d, void *handle) {
  (void)d;
  cpu_prog *p = handle;
  if (!p) return;
  if (!p->dl) {
    bg_host_obj_free(&p->obj);
  } else {
    if (dlclose(p->dl) != 0) BG_LOG(1, "cpu: program '%s': dlclose: %s", p->name, dlerror());
    close(p->fd);
  }
  free(p);
}
