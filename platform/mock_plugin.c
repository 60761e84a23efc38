/* platform/mock_plugin.c: loading the emulated-hardware module of tests/mockgpu (platform/mock_plugin.h). */
#include "platform/mock_plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "bg_config.h"

static pthread_mutex_t plugin_lock = PTHREAD_MUTEX_INITIALIZER;
static const bg_mock_plugin *plugin;

static int load(void);

static const bg_mock_host host = {.abi = BG_MOCK_PLUGIN_ABI, .pci_set_hooks = bg_pci_set_hooks};

/* Try one path: 1 loaded, 0 not there (why appended to tried), negative: there but unusable. */
static int try_path(const char *path, char *tried, size_t n) {
  size_t len = strlen(tried);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    snprintf(tried + len, n - len, "%s%s (%s)", len ? "; " : "", path, why ? why : "not loadable");
    return 0;
  }
  bg_mock_plugin_entry_fn entry;
  void *sym = dlsym(h, BG_MOCK_PLUGIN_ENTRY);
  memcpy(&entry, &sym, sizeof(entry)); /* object pointer to function pointer: POSIX dlsym */
  if (!sym) {
    dlclose(h);
    return bg_error(BG_EINVAL, "mock plugin %s: no symbol %s: %s", path, BG_MOCK_PLUGIN_ENTRY, dlerror());
  }
  const bg_mock_plugin *p = entry();
  if (!p || p->abi != BG_MOCK_PLUGIN_ABI || !p->start || !p->usb_transport || !p->exec_ns || !p->nv_sys || !p->nv_assemble ||
      !p->inject || !p->shader_stats) {
    dlclose(h);
    return bg_error(BG_EINVAL, "mock plugin %s: ABI %u, this library needs %u", path, p ? p->abi : 0,
                    BG_MOCK_PLUGIN_ABI);
  }
  plugin = p;
  BG_LOG(1, "mock plugin: loaded %s", path);
  return 1;
}

/* The file this code was loaded from (libbaregpu.so, or the program that linked libbaregpu.a). */
static bool own_object(char *out, size_t n) {
  Dl_info info;
  void *self;
  int (*fn)(void) = load;
  memcpy(&self, &fn, sizeof(self)); /* function pointer to object pointer: POSIX dladdr */
  if (!dladdr(self, &info) || !info.dli_fname || !info.dli_fname[0]) return false;
  if (!realpath(info.dli_fname, out)) snprintf(out, n, "%s", info.dli_fname);
  return true;
}

/* Where the module is looked for, in order: BG_MOCK_PLUGIN alone when set; else the build tree's module only when
 * this code runs from the build tree; else baregpu/libbaregpu-mock.so beside the library itself (the installed
 * layout, wherever the prefix was moved), then the configured install path. An installed library never loads a
 * build tree's module. */
static size_t plugin_paths(const char *paths[3], char *beside, size_t n) {
  size_t np = 0;
  const char *env = getenv("BG_MOCK_PLUGIN");
  if (env && *env) {
    paths[np++] = env;
    return np;
  }
  char obj[4096];
  bool have_obj = own_object(obj, sizeof(obj));
#ifdef BG_MOCK_PLUGIN_PATH
  size_t root = strlen(BG_BUILD_ROOT);
  if (have_obj && strncmp(obj, BG_BUILD_ROOT, root) == 0 && obj[root] == '/') {
    paths[np++] = BG_MOCK_PLUGIN_PATH;
    return np;
  }
#endif
  char *slash = have_obj ? strrchr(obj, '/') : NULL;
  if (slash) {
    *slash = '\0';
    snprintf(beside, n, "%s/baregpu/libbaregpu-mock.so", obj);
    paths[np++] = beside;
  }
  if (!slash || strcmp(beside, BG_MOCK_PLUGIN_INSTALL_PATH) != 0) paths[np++] = BG_MOCK_PLUGIN_INSTALL_PATH;
  return np;
}

static int load(void) {
  if (plugin) return 0;
  char tried[2048] = "", beside[4200];
  const char *paths[3];
  size_t np = plugin_paths(paths, beside, sizeof(beside));
  for (size_t i = 0; i < np; i++) {
    int r = try_path(paths[i], tried, sizeof(tried));
    if (r != 0) return r < 0 ? r : 0;
  }
  return bg_error(BG_ENODEV, "the emulated devices need the module libbaregpu-mock.so (built with -Dmock=true; set "
                  "BG_MOCK_PLUGIN to its path): tried %s", np ? tried : "nothing (no path configured)");
}

int bg_mock_plugin_start(const char *iface, const char *kind, bg_mock_devices *out) {
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&plugin_lock);
  int r = load();
  if (r == 0) {
    char err[512] = "";
    r = plugin->start(&host, iface, kind, out, err, sizeof(err));
    if (r < 0) r = bg_error(-r, "%s+%s: the emulated devices did not start: %s", iface, kind, err[0] ? err : "?");
    else if (out->count < 0 || out->count > BG_MOCK_MAX_DEVICES)
      r = bg_error(BG_EINVAL, "%s+%s: the mock plugin reports %d devices", iface, kind, out->count);
  }
  pthread_mutex_unlock(&plugin_lock);
  return r;
}

int bg_mock_plugin_usb_transport(int index, bg_usb_transport **out) {
  *out = NULL;
  pthread_mutex_lock(&plugin_lock);
  int r = plugin ? 0 : bg_error(BG_ENODEV, "MOCKUSB: the mock plugin is not loaded");
  if (r == 0) {
    char err[512] = "";
    r = plugin->usb_transport(index, out, err, sizeof(err));
    if (r < 0) r = bg_error(-r, "MOCKUSB device %d: no transport: %s", index, err[0] ? err : "?");
  }
  pthread_mutex_unlock(&plugin_lock);
  return r;
}

int bg_mock_plugin_nv_sys(const bg_nv_sys **out) {
  *out = NULL;
  pthread_mutex_lock(&plugin_lock);
  int r = plugin ? 0 : bg_error(BG_ENODEV, "MOCKNVK: the mock plugin is not loaded");
  if (r == 0) {
    char err[512] = "";
    r = plugin->nv_sys(out, err, sizeof(err));
    if (r < 0) r = bg_error(-r, "MOCKNVK: no emulated kernel module: %s", err[0] ? err : "?");
  }
  pthread_mutex_unlock(&plugin_lock);
  return r;
}

int bg_mock_plugin_nv_assemble(const char *ptx, unsigned sm, uint8_t **cubin, size_t *n) {
  *cubin = NULL;
  *n = 0;
  pthread_mutex_lock(&plugin_lock);
  int r = plugin ? 0 : bg_error(BG_ENODEV, "MOCKNVK: the mock plugin is not loaded");
  pthread_mutex_unlock(&plugin_lock);
  if (r == 0) {
    /* Not under the lock: assembling is stateless and may run on several threads. */
    char err[512] = "";
    r = plugin->nv_assemble(ptx, sm, cubin, n, err, sizeof(err));
    if (r < 0) r = bg_error(-r, "MOCKNVK: the emulated GPU's assembler (sm_%u) refused the PTX: %s", sm, err[0] ? err : "?");
  }
  return r;
}

int bg_mock_plugin_inject(const char *iface, int index, const char *kind, unsigned count) {
  pthread_mutex_lock(&plugin_lock);
  int r = plugin ? 0 : bg_error(BG_ENODEV, "mock inject: the mock plugin is not loaded");
  char err[512] = "";
  if (r == 0 && (r = plugin->inject(iface, index, kind, count, err, sizeof(err))) < 0)
    r = bg_error(-r, "mock inject %s into %s device %d: %s", kind, iface, index, err[0] ? err : "?");
  pthread_mutex_unlock(&plugin_lock);
  return r;
}

int bg_mock_plugin_shader_stats(const char *iface, int index, bg_mock_shader_stats *out) {
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&plugin_lock);
  int r = plugin ? 0 : bg_error(BG_ENODEV, "mock shader stats: the mock plugin is not loaded");
  char err[512] = "";
  if (r == 0 && (r = plugin->shader_stats(iface, index, out, err, sizeof(err))) < 0)
    r = bg_error(-r, "mock shader stats of %s device %d: %s", iface ? iface : "(null)", index, err[0] ? err : "?");
  pthread_mutex_unlock(&plugin_lock);
  return r;
}

uint64_t bg_mock_plugin_exec_ns(void) {
  pthread_mutex_lock(&plugin_lock);
  uint64_t ns = plugin ? plugin->exec_ns() : 0;
  pthread_mutex_unlock(&plugin_lock);
  return ns;
}

static int set_env_once(const char *name, const char *value) {
  static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&env_lock);
  const char *cur = getenv(name);
  int r = cur && strcmp(cur, value) == 0 ? 0 : setenv(name, value, 1);
  pthread_mutex_unlock(&env_lock);
  return r;
}

int bg_mock_plugin_enter(const bg_mock_devices *md, bool sysfs, const char *what) {
  if ((sysfs && set_env_once("BG_SYSFS_ROOT", md->sysfs_root) < 0) ||
      (md->lock_dir[0] && set_env_once("BG_LOCK_DIR", md->lock_dir) < 0))
    return bg_error(BG_ENOMEM, "%s: cannot set %sBG_LOCK_DIR", what, sysfs ? "BG_SYSFS_ROOT/" : "");
  return 0;
}
