/* hcq/mock_plugin.c: loading the emulated-hardware module of tests/mockgpu (hcq/mock_plugin.h). */
#include "hcq/mock_plugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "bg_config.h"

static pthread_mutex_t plugin_lock = PTHREAD_MUTEX_INITIALIZER;
static const bg_mock_plugin *plugin;

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
  if (!p || p->abi != BG_MOCK_PLUGIN_ABI || !p->start || !p->usb_transport || !p->exec_ns) {
    dlclose(h);
    return bg_error(BG_EINVAL, "mock plugin %s: ABI %u, this library needs %u", path, p ? p->abi : 0,
                    BG_MOCK_PLUGIN_ABI);
  }
  plugin = p;
  BG_LOG(1, "mock plugin: loaded %s", path);
  return 1;
}

static int load(void) {
  if (plugin) return 0;
  char tried[2048] = "";
  const char *env = getenv("BG_MOCK_PLUGIN");
  const char *paths[3];
  size_t np = 0;
  if (env && *env) {
    paths[np++] = env; /* named explicitly: the only one tried */
  } else {
#ifdef BG_MOCK_PLUGIN_PATH
    paths[np++] = BG_MOCK_PLUGIN_PATH;
#endif
#ifdef BG_MOCK_PLUGIN_INSTALL_PATH
    paths[np++] = BG_MOCK_PLUGIN_INSTALL_PATH;
#endif
  }
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

uint64_t bg_mock_plugin_exec_ns(void) {
  pthread_mutex_lock(&plugin_lock);
  uint64_t ns = plugin ? plugin->exec_ns() : 0;
  pthread_mutex_unlock(&plugin_lock);
  return ns;
}
