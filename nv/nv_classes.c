/* nv/nv_classes.c: class selection. Values from open-gpu-kernel-modules src/nvidia/generated/g_allclasses.h; which
 * chip lists which classes from src/nvidia/generated/g_gpu_class_list.c (GA102: c7c0/c7b5/c56f, AD102: c9c0/c7b5/c56f,
 * GH100: cbc0/c8b5/c86f+c56f, GB202: cec0/cab5/c96f+ca6f+c86f+c56f). Unlike tinygrad's ops_nv.py setup_usermode, the
 * lists include Hopper (HOPPER_COMPUTE_A, HOPPER_DMA_COPY_A, HOPPER_CHANNEL_GPFIFO_A) and GA100's *_A classes. */
#include "nv_classes.h"

#include <stdio.h>
#include <string.h>

#include "baregpu/error.h"
#include "nv_abi.h"

static const struct {
  uint32_t cls;
  const char *name;
} names[] = {
    {TURING_USERMODE_A, "TURING_USERMODE_A"},         {AMPERE_USERMODE_A, "AMPERE_USERMODE_A"},
    {HOPPER_USERMODE_A, "HOPPER_USERMODE_A"},         {BLACKWELL_USERMODE_A, "BLACKWELL_USERMODE_A"},
    {AMPERE_CHANNEL_GPFIFO_A, "AMPERE_CHANNEL_GPFIFO_A"}, {HOPPER_CHANNEL_GPFIFO_A, "HOPPER_CHANNEL_GPFIFO_A"},
    {BLACKWELL_CHANNEL_GPFIFO_A, "BLACKWELL_CHANNEL_GPFIFO_A"}, {BLACKWELL_CHANNEL_GPFIFO_B, "BLACKWELL_CHANNEL_GPFIFO_B"},
    {AMPERE_DMA_COPY_A, "AMPERE_DMA_COPY_A"},         {AMPERE_DMA_COPY_B, "AMPERE_DMA_COPY_B"},
    {HOPPER_DMA_COPY_A, "HOPPER_DMA_COPY_A"},         {BLACKWELL_DMA_COPY_A, "BLACKWELL_DMA_COPY_A"},
    {BLACKWELL_DMA_COPY_B, "BLACKWELL_DMA_COPY_B"},   {AMPERE_COMPUTE_A, "AMPERE_COMPUTE_A"},
    {AMPERE_COMPUTE_B, "AMPERE_COMPUTE_B"},           {ADA_COMPUTE_A, "ADA_COMPUTE_A"},
    {HOPPER_COMPUTE_A, "HOPPER_COMPUTE_A"},           {BLACKWELL_COMPUTE_A, "BLACKWELL_COMPUTE_A"},
    {BLACKWELL_COMPUTE_B, "BLACKWELL_COMPUTE_B"},     {NV01_ROOT_CLIENT, "NV01_ROOT_CLIENT"},
    {NV01_MEMORY_SYSTEM, "NV01_MEMORY_SYSTEM"},       {NV1_MEMORY_USER, "NV1_MEMORY_USER"},
    {NV01_MEMORY_VIRTUAL, "NV01_MEMORY_VIRTUAL"},     {NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, "NV01_MEMORY_SYSTEM_OS_DESCRIPTOR"},
    {NV01_DEVICE_0, "NV01_DEVICE_0"},                 {NV20_SUBDEVICE_0, "NV20_SUBDEVICE_0"},
    {GT200_DEBUGGER, "GT200_DEBUGGER"},               {FERMI_CONTEXT_SHARE_A, "FERMI_CONTEXT_SHARE_A"},
    {FERMI_VASPACE_A, "FERMI_VASPACE_A"},             {KEPLER_CHANNEL_GROUP_A, "KEPLER_CHANNEL_GROUP_A"},
};

const char *bg_nv_class_name(uint32_t cls) {
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].cls == cls) return names[i].name;
  return NULL;
}

/* Preference lists, newest generation first; 0 ends a list. Usermode and GPFIFO: a chip lists its own class and
 * older ones (GH100 has c56f and c86f), so the newest present wins. BLACKWELL_CHANNEL_GPFIFO_B (GB202) is left out
 * as tinygrad (the one implementation run on GB20x) uses BLACKWELL_CHANNEL_GPFIFO_A there; BLACKWELL_USERMODE_A
 * likewise (tinygrad: HOPPER_USERMODE_A, which GB202 also lists). */
static const uint32_t usermode_pref[] = {HOPPER_USERMODE_A, TURING_USERMODE_A, 0};
static const uint32_t gpfifo_pref[] = {BLACKWELL_CHANNEL_GPFIFO_A, HOPPER_CHANNEL_GPFIFO_A, AMPERE_CHANNEL_GPFIFO_A, 0};
static const uint32_t copy_pref[] = {BLACKWELL_DMA_COPY_B, BLACKWELL_DMA_COPY_A, HOPPER_DMA_COPY_A, AMPERE_DMA_COPY_B,
                                     AMPERE_DMA_COPY_A, 0};
static const struct {
  uint32_t cls;
  int qmd;
  const char *generation;
} compute_pref[] = {
    {BLACKWELL_COMPUTE_B, 5, "Blackwell"}, {BLACKWELL_COMPUTE_A, 5, "Blackwell"}, {HOPPER_COMPUTE_A, 4, "Hopper"},
    {ADA_COMPUTE_A, 3, "Ada"},             {AMPERE_COMPUTE_B, 3, "Ampere"},       {AMPERE_COMPUTE_A, 3, "Ampere"},
};

static int has(const uint32_t *classes, size_t n, uint32_t cls) {
  for (size_t i = 0; i < n; i++)
    if (classes[i] == cls) return 1;
  return 0;
}

/* "0xc56f 0xc86f ..." (at most the first 48) */
static void list_text(const uint32_t *v, size_t n, char *buf, size_t cap) {
  size_t o = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && i < 48 && o + 8 < cap; i++) o += (size_t)snprintf(buf + o, cap - o, "%s0x%x", i ? " " : "", v[i]);
  if (n > 48 && o + 5 < cap) snprintf(buf + o, cap - o, " ...");
}

static int pick(const char *role, const uint32_t *pref, const uint32_t *classes, size_t n, uint32_t *out) {
  size_t np = 0;
  for (; pref[np]; np++)
    if (has(classes, n, pref[np])) {
      *out = pref[np];
      return 0;
    }
  char want[256], got[512];
  list_text(pref, np, want, sizeof want);
  list_text(classes, n, got, sizeof got);
  return bg_error(BG_ENOTSUP, "nv: the device lists no %s class baregpu knows (wanted one of %s; device has %s)", role,
                  want, n ? got : "no classes");
}

int bg_nv_classes_select(const uint32_t *classes, size_t n, bg_nv_class_choice *out) {
  if ((!classes && n) || !out) return bg_error(BG_EINVAL, "nv: class selection: NULL argument");
  bg_nv_class_choice c = {0};
  uint32_t compute_list[sizeof compute_pref / sizeof compute_pref[0] + 1] = {0};
  for (size_t i = 0; i < sizeof compute_pref / sizeof compute_pref[0]; i++) compute_list[i] = compute_pref[i].cls;
  int r;
  if ((r = pick("compute", compute_list, classes, n, &c.compute)) || (r = pick("copy", copy_pref, classes, n, &c.copy)) ||
      (r = pick("GPFIFO channel", gpfifo_pref, classes, n, &c.gpfifo)) ||
      (r = pick("usermode", usermode_pref, classes, n, &c.usermode)))
    return r;
  for (size_t i = 0; i < sizeof compute_pref / sizeof compute_pref[0]; i++)
    if (compute_pref[i].cls == c.compute) c.qmd_version = compute_pref[i].qmd, c.generation = compute_pref[i].generation;
  *out = c;
  return 0;
}

int bg_nv_qmd_version(uint32_t compute_class) {
  for (size_t i = 0; i < sizeof compute_pref / sizeof compute_pref[0]; i++)
    if (compute_pref[i].cls == compute_class) return compute_pref[i].qmd;
  return bg_error(BG_ENOTSUP, "nv: 0x%x is not a compute class baregpu knows (no QMD version)", compute_class);
}

/* ctrl2080gr.h: NV2080_CTRL_GR_INFO_SM_VERSION_M_NN is (M << 8) | NN with NN two decimal digits written as hex
 * (8_06 = 0x806, 10_04 = 0xa04, 12_00 = 0xc00); older ones carry one digit in the high nibble (1_1 = 0x110).
 * GB20x (consumer Blackwell) report 0xa04 but are sm_120 (tinygrad ops_nv.py NVDevice.__init__). */
int bg_nv_sm_arch(uint32_t sm_version, unsigned *sm, char *buf, size_t cap) {
  unsigned major = (sm_version >> 8) & 0xffu, lo = sm_version & 0xffu, minor;
  if (sm_version == 0xa04u) major = 12, lo = 0;
  minor = lo > 0xf ? lo >> 4 : lo;
  if (major == 0 || sm_version > 0xffffu || (lo > 0xf && (lo & 0xf)) || minor > 9)
    return bg_error(BG_ENOTSUP, "nv: GR SM version 0x%x is not a known NV2080_CTRL_GR_INFO_SM_VERSION encoding",
                    sm_version);
  unsigned v = major * 10 + minor;
  if (sm) *sm = v;
  if (buf && cap) snprintf(buf, cap, "sm_%u", v);
  return 0;
}
