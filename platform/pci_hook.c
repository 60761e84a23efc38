/* platform/pci_hook.c: the registry of emulated-device hooks per sysfs root (platform/pci_hook.h). */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "baregpu/error.h"
#include "platform/pci_hook.h"
#include "platform/pci_scan.h"

#define MAX_ROOTS 8

typedef struct hook_slot {
  char root[PATH_MAX];
  const bg_pci_hooks *hooks;
  void *ctx;
} hook_slot;

static hook_slot slots[MAX_ROOTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

int bg_pci_set_hooks(const char *root, const bg_pci_hooks *hooks, void *ctx) {
  if (!root || !*root || strlen(root) >= PATH_MAX) return bg_error(BG_EINVAL, "pci hooks: bad root");
  pthread_mutex_lock(&slots_lock);
  hook_slot *free_slot = NULL, *s = NULL;
  for (int i = 0; i < MAX_ROOTS; i++) {
    if (slots[i].hooks && strcmp(slots[i].root, root) == 0) s = &slots[i];
    if (!slots[i].hooks && !free_slot) free_slot = &slots[i];
  }
  int r = 0;
  if (!hooks) {
    if (s) memset(s, 0, sizeof(*s));
  } else {
    if (!s) s = free_slot;
    if (!s) {
      r = bg_error(BG_ENOMEM, "pci hooks: more than %d emulated sysfs roots", MAX_ROOTS);
    } else {
      strcpy(s->root, root);
      s->hooks = hooks;
      s->ctx = ctx;
    }
  }
  pthread_mutex_unlock(&slots_lock);
  return r;
}

const bg_pci_hooks *bg_pci_hooks_current(void **ctx) {
  const char *root = bg_pci_sysfs_root();
  const bg_pci_hooks *h = NULL;
  pthread_mutex_lock(&slots_lock);
  for (int i = 0; i < MAX_ROOTS && !h; i++)
    if (slots[i].hooks && strcmp(slots[i].root, root) == 0) {
      h = slots[i].hooks;
      *ctx = slots[i].ctx;
    }
  pthread_mutex_unlock(&slots_lock);
  return h;
}
