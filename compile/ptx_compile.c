/* compile/ptx_compile.c: PTX -> cubin (see ptx_compile.h). nvJitLink's C API is declared here from
 * its documented signatures (nvJitLink.h of the CUDA toolkit); nothing links against CUDA. */
#include "compile/ptx_compile.h"

#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "baregpu/error.h"

extern char **environ;

enum { LOG_MAX = 1600, NVJITLINK_INPUT_PTX = 2 };   /* nvJitLinkInputType: NONE 0, CUBIN 1, PTX 2 */
#define MAX_CUBIN (256u << 20)

/* ---- nvJitLink ---- */

typedef void *nvjl_handle;
typedef int (*nvjl_create_fn)(nvjl_handle *, uint32_t, const char **);
typedef int (*nvjl_destroy_fn)(nvjl_handle *);
typedef int (*nvjl_add_fn)(nvjl_handle, int, const void *, size_t, const char *);
typedef int (*nvjl_complete_fn)(nvjl_handle);
typedef int (*nvjl_size_fn)(nvjl_handle, size_t *);
typedef int (*nvjl_get_fn)(nvjl_handle, void *);

static const char *const g_jitlink_libs[] = {"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so",
                                             "/usr/local/cuda/lib64/libnvJitLink.so"};

/* Loaded once and kept for the process: nvJitLink keeps heap state in its globals, which a dlclose after each
 * compile would strand (LeakSanitizer reports it) and the next dlopen would build again. */
static void *g_jitlink;
static char g_jitlink_err[256];
static pthread_once_t g_jitlink_once = PTHREAD_ONCE_INIT;

static void load_jitlink(void) {
  for (size_t i = 0; i < sizeof g_jitlink_libs / sizeof *g_jitlink_libs && !g_jitlink; i++)
    g_jitlink = dlopen(g_jitlink_libs[i], RTLD_NOW | RTLD_LOCAL);
  if (!g_jitlink) {
    const char *e = dlerror();
    snprintf(g_jitlink_err, sizeof g_jitlink_err, "%s", e ? e : "not found");
  }
}

static void *open_jitlink(void) {
  pthread_once(&g_jitlink_once, load_jitlink);
  return g_jitlink;
}

/* The error log (or info log) of a failed link, into msg. */
static void jitlink_log(void *lib, nvjl_handle h, const char *size_sym, const char *get_sym, char *msg, size_t cap) {
  nvjl_size_fn size_fn = (nvjl_size_fn)dlsym(lib, size_sym);
  nvjl_get_fn get_fn = (nvjl_get_fn)dlsym(lib, get_sym);
  size_t n = 0;
  msg[0] = '\0';
  if (!size_fn || !get_fn || size_fn(h, &n) != 0 || n == 0) return;
  char *buf = malloc(n + 1);
  if (!buf) return;
  if (get_fn(h, buf) == 0) {
    buf[n] = '\0';
    snprintf(msg, cap, "%s", buf);
  }
  free(buf);
}

static int compile_jitlink(void *lib, const char *ptx, unsigned sm, uint8_t **cubin, size_t *n) {
  nvjl_create_fn create = (nvjl_create_fn)dlsym(lib, "nvJitLinkCreate");
  nvjl_destroy_fn destroy = (nvjl_destroy_fn)dlsym(lib, "nvJitLinkDestroy");
  nvjl_add_fn add = (nvjl_add_fn)dlsym(lib, "nvJitLinkAddData");
  nvjl_complete_fn complete = (nvjl_complete_fn)dlsym(lib, "nvJitLinkComplete");
  nvjl_size_fn size = (nvjl_size_fn)dlsym(lib, "nvJitLinkGetLinkedCubinSize");
  nvjl_get_fn get = (nvjl_get_fn)dlsym(lib, "nvJitLinkGetLinkedCubin");
  if (!create || !destroy || !add || !complete || !size || !get)
    return bg_error(BG_ENOTSUP, "ptx: libnvJitLink lacks nvJitLinkCreate/Destroy/AddData/Complete/GetLinkedCubin(Size)");
  char arch[32];
  snprintf(arch, sizeof arch, "-arch=sm_%u", sm);
  const char *opts[] = {arch};
  nvjl_handle h = NULL;
  int r = create(&h, 1, opts);
  if (r != 0) return bg_error(BG_ECOMPILE, "ptx: nvJitLinkCreate(%s) failed with status %d", arch, r);
  int rc = 0;
  const char *step = "nvJitLinkAddData";
  r = add(h, NVJITLINK_INPUT_PTX, ptx, strlen(ptx), "kernel.ptx");
  if (r == 0) {
    step = "nvJitLinkComplete";
    r = complete(h);
  }
  size_t sz = 0;
  if (r == 0) {
    step = "nvJitLinkGetLinkedCubinSize";
    r = size(h, &sz);
  }
  if (r != 0) {
    char log[LOG_MAX];
    jitlink_log(lib, h, "nvJitLinkGetErrorLogSize", "nvJitLinkGetErrorLog", log, sizeof log);
    rc = bg_error(BG_ECOMPILE, "ptx: %s for %s failed with status %d: %s", step, arch, r, log[0] ? log : "(no error log)");
  } else if (sz == 0 || sz > MAX_CUBIN) {
    rc = bg_error(BG_ECOMPILE, "ptx: nvJitLink produced a %zu-byte cubin for %s", sz, arch);
  } else if (!(*cubin = malloc(sz))) {
    rc = bg_error(BG_ENOMEM, "ptx: out of memory for a %zu-byte cubin", sz);
  } else if ((r = get(h, *cubin)) != 0) {
    free(*cubin);
    *cubin = NULL;
    rc = bg_error(BG_ECOMPILE, "ptx: nvJitLinkGetLinkedCubin failed with status %d", r);
  } else {
    *n = sz;
  }
  destroy(&h);
  return rc;
}

/* ---- ptxas ---- */

static bool executable(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

int bg_ptx_find_ptxas(char *out, size_t n) {
  const char *path = getenv("PATH");
  if (path) {
    const char *p = path;
    while (*p) {
      size_t len = strcspn(p, ":");
      if (len > 0 && (size_t)snprintf(out, n, "%.*s/ptxas", (int)len, p) < n && executable(out)) return 0;
      p += len;
      if (*p == ':') p++;
    }
  }
  if ((size_t)snprintf(out, n, "/usr/local/cuda/bin/ptxas") < n && executable(out)) return 0;
  if (n) out[0] = '\0';
  return bg_error(BG_ENOTSUP, "ptx: no ptxas in PATH ('%s') or /usr/local/cuda/bin", path ? path : "");
}

static int write_all(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return bg_error(BG_EIO, "ptx: cannot create %s: %s", path, strerror(errno));
  size_t len = strlen(text), done = 0;
  while (done < len) {
    ssize_t w = write(fd, text + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += (size_t)w;
  }
  int c = close(fd);
  return done == len && c == 0 ? 0 : bg_error(BG_EIO, "ptx: cannot write %s: %s", path, strerror(errno));
}

static int read_all(const char *path, uint8_t **data, size_t *n) {
  FILE *f = fopen(path, "rbe");
  if (!f) return bg_error(BG_ECOMPILE, "ptx: ptxas wrote no %s: %s", path, strerror(errno));
  int rc = 0;
  long sz = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (sz <= 0 || (unsigned long)sz > MAX_CUBIN) rc = bg_error(BG_ECOMPILE, "ptx: %s has %ld bytes", path, sz);
  else if (!(*data = malloc((size_t)sz))) rc = bg_error(BG_ENOMEM, "ptx: out of memory for %ld bytes", sz);
  else if (fseek(f, 0, SEEK_SET) != 0 || fread(*data, 1, (size_t)sz, f) != (size_t)sz) {
    free(*data);
    *data = NULL;
    rc = bg_error(BG_EIO, "ptx: cannot read %s", path);
  } else {
    *n = (size_t)sz;
  }
  fclose(f);
  return rc;
}

/* Run argv with stdout+stderr into log; *status: its wait status. */
static int run_collect(char **argv, char *log, size_t cap, int *status) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return bg_error(BG_EIO, "ptx: pipe: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  pid_t pid;
  int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (e != 0) {
    close(fds[0]);
    return bg_error(BG_ECOMPILE, "ptx: cannot run %s: %s", argv[0], strerror(e));
  }
  size_t n = 0;
  char chunk[512];
  for (;;) {   /* drain all of it so ptxas never blocks on a full pipe */
    ssize_t r = read(fds[0], chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    size_t take = (size_t)r < cap - 1 - n ? (size_t)r : cap - 1 - n;
    memcpy(log + n, chunk, take);
    n += take;
  }
  while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == ' ')) n--;
  log[n] = '\0';
  close(fds[0]);
  while (waitpid(pid, status, 0) < 0)
    if (errno != EINTR) return bg_error(BG_EIO, "ptx: waitpid for %s: %s", argv[0], strerror(errno));
  return 0;
}

static int compile_ptxas(const char *ptxas, const char *ptx, unsigned sm, uint8_t **cubin, size_t *n) {
  const char *tmp = getenv("TMPDIR");
  char dir[4096], in[4200], out[4200], arch[32];
  if ((size_t)snprintf(dir, sizeof dir, "%s/bg-ptx-XXXXXX", tmp && *tmp ? tmp : "/tmp") >= sizeof dir)
    return bg_error(BG_EINVAL, "ptx: TMPDIR '%s' is too long", tmp);
  if (!mkdtemp(dir)) return bg_error(BG_EIO, "ptx: cannot create a temporary directory %s: %s", dir, strerror(errno));
  snprintf(in, sizeof in, "%s/kernel.ptx", dir);
  snprintf(out, sizeof out, "%s/kernel.cubin", dir);
  snprintf(arch, sizeof arch, "-arch=sm_%u", sm);
  int rc = write_all(in, ptx);
  if (!rc) {
    char *argv[] = {(char *)ptxas, arch, in, (char *)"-o", out, NULL};
    char log[LOG_MAX];
    int status = 0;
    rc = run_collect(argv, log, sizeof log, &status);
    if (!rc && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      rc = bg_error(BG_ECOMPILE, "ptx: %s %s failed (%s %d): %s", ptxas, arch, WIFEXITED(status) ? "exit" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), log[0] ? log : "(no output)");
    if (!rc) rc = read_all(out, cubin, n);
  }
  unlink(in);
  unlink(out);
  rmdir(dir);
  return rc;
}

int bg_ptx_compile(const char *ptx, unsigned sm, bg_ptx_tool tool, uint8_t **cubin, size_t *n) {
  if (!ptx || !cubin || !n) return bg_error(BG_EINVAL, "ptx: compile: NULL ptx or output");
  if (sm < 30 || sm > 255) return bg_error(BG_EINVAL, "ptx: sm %u, expected 30..255 (sm_80 is 80)", sm);
  if (tool != BG_PTX_AUTO && tool != BG_PTX_NVJITLINK && tool != BG_PTX_PTXAS)
    return bg_error(BG_EINVAL, "ptx: tool %d, expected BG_PTX_AUTO, BG_PTX_NVJITLINK or BG_PTX_PTXAS", (int)tool);
  *cubin = NULL;
  *n = 0;
  if (tool != BG_PTX_PTXAS) {
    void *lib = open_jitlink();
    if (lib) {
      return compile_jitlink(lib, ptx, sm, cubin, n);
    }
    if (tool == BG_PTX_NVJITLINK)
      return bg_error(BG_ENOTSUP, "ptx: no nvJitLink: dlopen of libnvJitLink.so.13, .so.12, .so and "
                                  "/usr/local/cuda/lib64/libnvJitLink.so failed (%s)", g_jitlink_err);
  }
  char ptxas[4096];
  if (bg_ptx_find_ptxas(ptxas, sizeof ptxas) != 0)
    return bg_error(BG_ENOTSUP, "ptx: no PTX compiler: no libnvJitLink.so.{13,12,} (dlopen) and no ptxas in PATH or "
                                "/usr/local/cuda/bin");
  return compile_ptxas(ptxas, ptx, sm, cubin, n);
}
