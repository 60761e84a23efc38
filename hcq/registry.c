/* hcq/registry.c: the interfaces built into the library, device opening by DEV= target and
 * enumeration. Interface choice follows tinygrad's _select_iface: a named interface is the only one
 * tried; otherwise every non-mock interface of the kind in order, first that opens wins. Also the process-wide
 * registry of open physical devices (bg_phys_lock, hcq/dev_internal.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcq/backend.h"
#include "hcq/dev_internal.h"
#include "hcq/env.h"
#include "hcq/target.h"

extern const bg_iface bg_cpu_iface;
extern const bg_iface bg_am_pci_iface;     /* am/am_iface.c */
extern const bg_iface bg_am_mockpci_iface; /* am/am_iface.c */
extern const bg_iface bg_am_usb_iface;     /* am/am_iface.c */
extern const bg_iface bg_am_mockusb_iface; /* am/am_iface.c */

static const bg_iface *const builtin_ifaces[] = {
  &bg_cpu_iface,
  &bg_am_pci_iface,
  &bg_am_mockpci_iface,
  &bg_am_usb_iface,
  &bg_am_mockusb_iface,
};

size_t bg_ifaces(const bg_iface *const **out) {
  *out = builtin_ifaces;
  return sizeof(builtin_ifaces) / sizeof(builtin_ifaces[0]);
}

#define MAX_VISIBLE 64

/* Open device t through one interface. */
static int open_with(const bg_iface *ifc, const bg_target *t, const char *dev_str, bg_dev **out) {
  int n = ifc->count();
  if (n < 0) return n;
  int map[MAX_VISIBLE];
  int nvis = bg_visible_filter(t->indices, n, map, MAX_VISIBLE);
  if (t->index >= nvis)
    return bg_error(BG_ENODEV, "DEV=%s: index %d is out of range: %d %s device(s) visible through %s", dev_str,
                    t->index, nvis, t->kind, ifc->name[0] ? ifc->name : "the host");
  return bg_dev_create(ifc, t, map[t->index], out);
}

int bg_dev_open(const char *dev, bg_dev **out) {
  *out = NULL;
  bg_target t;
  int r = bg_env_check();
  if (r < 0) return r;
  const char *s = dev ? dev : getenv("DEV");
  if (!s || !*s) { /* "" and an unset or empty DEV: the default device, as bg_target_parse("") says */
    /* Default: the first GPU a real interface opens, else CPU. */
    const bg_iface *const *ifs;
    size_t n = bg_ifaces(&ifs);
    for (size_t i = 0; i < n; i++) {
      if (ifs[i]->mock || strcmp(ifs[i]->kind, "CPU") == 0 || ifs[i]->count() <= 0) continue;
      memset(&t, 0, sizeof(t));
      snprintf(t.kind, sizeof(t.kind), "%s", ifs[i]->kind);
      snprintf(t.iface, sizeof(t.iface), "%s", ifs[i]->name);
      if (bg_dev_create(ifs[i], &t, 0, out) == 0) return 0;
      BG_LOG(1, "default device: %s+%s did not open: %s", ifs[i]->name, ifs[i]->kind, bg_last_error());
    }
    s = "CPU";
  }
  if ((r = bg_target_parse(s, &t)) < 0) return r;
  if (!bg_target_built(t.kind, t.iface))
    return bg_error(BG_EINVAL, "DEV=%s: this build of baregpu has no %s%s%s driver; valid forms: %s", s,
                    t.iface[0] ? t.iface : "", t.iface[0] ? "+" : "", t.kind, bg_target_forms());
  const bg_iface *const *ifs;
  size_t n = bg_ifaces(&ifs);
  int first_err = 0;
  char first_msg[1024] = "";
  bool any = false;
  for (size_t i = 0; i < n; i++) {
    const bg_iface *ifc = ifs[i];
    if (strcmp(ifc->kind, t.kind) != 0) continue;
    if (t.iface[0] ? strcmp(ifc->name, t.iface) != 0 : ifc->mock) continue;
    any = true;
    r = open_with(ifc, &t, s, out);
    if (r == 0) return 0;
    if (!first_err) {
      first_err = r;
      snprintf(first_msg, sizeof(first_msg), "%s", bg_last_error());
    }
  }
  if (first_err) return bg_error(-first_err, "%s", first_msg);
  if (!any) /* the parser accepts only built kinds and interfaces, so this is a kind with only mock interfaces */
    return bg_error(BG_ENODEV, "DEV=%s: %s has only emulated interfaces in this build; name one (%s)", s, t.kind,
                    bg_target_forms());
  return bg_error(BG_ENODEV, "DEV=%s: no device", s);
}

int bg_dev_list(bool include_mock, char (*names)[48], size_t max) {
  const bg_iface *const *ifs;
  size_t n = bg_ifaces(&ifs);
  int total = 0;
  for (size_t i = 0; i < n; i++) {
    if (ifs[i]->mock && !include_mock) continue;
    int c = ifs[i]->count();
    for (int k = 0; k < c; k++, total++) {
      if ((size_t)total >= max) continue;
      if (ifs[i]->name[0])
        snprintf(names[total], 48, "%s+%s:%d", ifs[i]->name, ifs[i]->kind, k);
      else if (c > 1 || k > 0)
        snprintf(names[total], 48, "%s:%d", ifs[i]->kind, k);
      else
        snprintf(names[total], 48, "%s", ifs[i]->kind);
    }
  }
  return total;
}

/* ---------------- physical-device keys (dev_internal.h) ---------------- */

struct bg_phys_key {
  struct bg_phys_key *next;
  pthread_mutex_t m;     /* held across an open or a last close of the device */
  unsigned refs;         /* threads holding or waiting for m */
  char key[320];
};

static pthread_mutex_t phys_lock = PTHREAD_MUTEX_INITIALIZER; /* guards phys_keys and refs */
static bg_phys_key *phys_keys;

int bg_phys_lock(const char *key, bg_phys_key **out) {
  *out = NULL;
  if (!key || !*key || strlen(key) >= sizeof(((bg_phys_key *)0)->key))
    return bg_error(BG_EINVAL, "device key '%s': empty or longer than %zu bytes", key ? key : "(null)",
                    sizeof(((bg_phys_key *)0)->key) - 1);
  pthread_mutex_lock(&phys_lock);
  bg_phys_key *k = phys_keys;
  while (k && strcmp(k->key, key) != 0) k = k->next;
  if (!k && (k = calloc(1, sizeof(*k))) != NULL) {
    pthread_mutex_init(&k->m, NULL);
    snprintf(k->key, sizeof(k->key), "%s", key);
    k->next = phys_keys;
    phys_keys = k;
  }
  if (k) k->refs++;
  pthread_mutex_unlock(&phys_lock);
  if (!k) return bg_error(BG_ENOMEM, "%s: out of host memory for the open-device registry", key);
  pthread_mutex_lock(&k->m);
  *out = k;
  return 0;
}

void bg_phys_unlock(bg_phys_key *k) {
  if (!k) return;
  pthread_mutex_unlock(&k->m);
  pthread_mutex_lock(&phys_lock);
  if (--k->refs == 0) {
    for (bg_phys_key **pp = &phys_keys; *pp; pp = &(*pp)->next)
      if (*pp == k) {
        *pp = k->next;
        break;
      }
    pthread_mutex_destroy(&k->m);
    free(k);
  }
  pthread_mutex_unlock(&phys_lock);
}
