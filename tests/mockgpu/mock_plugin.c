/* tests/mockgpu/mock_plugin.c: the loadable module libbaregpu-mock.so (contract: platform/mock_plugin.h). start() builds a
 * fake sysfs tree in a temp dir with MOCKGPU_COUNT emulated AMD GPUs (MOCKGPU_CHIP, MOCKGPU_VRAM_MB) below root ports
 * and switches as MOCKGPU_TOPOLOGY lays them out (switch: 0000:03:00.0, 0000:04:00.0, ... behind one switch; split:
 * a root complex each, 0000:03:00.0, 0000:43:00.0, ...; mock_sysfs.h "Topology"), writes
 * correctly-headed firmware for the chip into another temp dir (tests/unit/am/fw_gen.c, compiled in) and fuses it
 * into the devices; the tree's hooks go to the library's platform/pci through host->pci_set_hooks, never through the
 * module's own copy of bg_pci_set_hooks. The tree sets BG_SYSFS_ROOT / BG_LOCK_DIR / BG_PROC_ROOT while it is
 * built; the module puts the process environment back afterwards: the library gets the paths in bg_mock_devices.
 * MOCKPCI and MOCKUSB get GPUs of their own in the one tree (MOCKPCI as above, MOCKUSB flat at 0000:13:00.0..,
 * like two machines' worth of hardware), each MOCKUSB GPU behind an emulated ASM24 bridge (asm24.h) that the
 * library reaches through usb_transport(). stop() (also at exit or unload) frees bridges, then GPUs, then the tree
 * and removes both temp dirs (mock_tmpdir_new names them bg-mock-<pid>-*: a killed run's are swept by the next).
 * Kind NV (MOCKPCI+NV, MOCKUSB+NV; built when tests/mockgpu/nv_pci has its GSP-RM model, BG_MOCK_NVPCI): the same
 * tree and topology with emulated NVIDIA GPUs (nvpci.h; MOCKGPU_CHIP ga102 (default), ad102, gh100 or gb202;
 * MOCKGPU_VRAM_MB >= 256), each with its GSP-RM model, and the chip's generated firmware folder as fw_dir. One kind
 * per process: the tree's GPUs are AMD or NV.
 * MOCKGPU_SHARED=1: the GPUs' state is shared with the children forked after start (mock_shm.h). Only bg_mock_plugin_entry is exported (-fvisibility=hidden and a version script). */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amd_cp.h"
#include "amd_engine.h"
#include "amd_gpu.h"
#include "asm24.h"
#include "baregpu/error.h"
#include "fw_gen.h"
#include "platform/mock_plugin.h"
#include "mock_shm.h"
#include "mock_sysfs.h"
#include "nv/mock_nv.h"
#ifdef BG_MOCK_NVPCI
#include "nvpci_internal.h"
#endif

#define BG_EXPORT __attribute__((visibility("default")))
/* Address space of the MOCKGPU_SHARED arena (NORESERVE: only touched pages cost memory; VRAM is mapped apart). */
#define MOCK_SHM_ARENA (1ull << 30)

static pthread_mutex_t plugin_lock = PTHREAD_MUTEX_INITIALIZER;
/* The GPUs of one interface. */
typedef struct mock_set {
  bool started;
  mock_amd *gpu[BG_MOCK_MAX_DEVICES];        /* kind AMD */
#ifdef BG_MOCK_NVPCI
  nvpci_gpu *nvg[BG_MOCK_MAX_DEVICES];      /* kind NV, each with its GSP-RM model */
  nvpci_gsp *nvs[BG_MOCK_MAX_DEVICES];
#endif
  mock_asm24 *bridge[BG_MOCK_MAX_DEVICES];  /* MOCKUSB only */
  bg_mock_devices devs;
} mock_set;

static struct {
  bool started;                /* tree and firmware exist */
  pid_t owner;                 /* the process that started them (a fork()ed child never stops them) */
  mock_sysfs *tree;
  char fw_dir[256];
  mock_amd_chip chip;
  bool nv;                     /* the GPUs are NVIDIA's (kind NV) */
#ifdef BG_MOCK_NVPCI
  char nv_chip[8];             /* MOCKGPU_CHIP of kind NV */
#endif
  int count, vram_mb;
  bool hdp_coherent;           /* MOCKGPU_HDP=coherent */
  mock_topology topo;          /* MOCKGPU_TOPOLOGY: how the MOCKPCI GPUs hang off the root complexes */
  mock_set set[2];             /* MOCKPCI, MOCKUSB */
} S;

static const char *const ENV_KEPT[] = {"BG_SYSFS_ROOT", "BG_LOCK_DIR", "BG_PROC_ROOT"};
#define NENV (sizeof(ENV_KEPT) / sizeof(ENV_KEPT[0]))

static void stop_locked(void) {
  if (!S.started || S.owner != getpid()) return; /* a child's copy: the engine threads and dirs are the parent's */
  for (int k = 0; k < 2; k++) /* a bridge forwards to its GPU: bridges go first */
    for (int i = 0; i < S.set[k].devs.count; i++) mock_asm24_free(S.set[k].bridge[i]);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < S.set[k].devs.count; i++) {
      mock_amd_free(S.set[k].gpu[i]);
#ifdef BG_MOCK_NVPCI
      nvpci_gsp_free(S.set[k].nvs[i]);
      nvpci_free(S.set[k].nvg[i]);
#endif
    }
  mock_sysfs_free(S.tree);
  if (S.fw_dir[0]) mock_rm_tree(S.fw_dir);
  memset(&S, 0, sizeof(S));
}

static void plugin_stop(void) {
  pthread_mutex_lock(&plugin_lock);
  mock_nv_stop(); /* its own process check and state (tests/mockgpu/nv) */
  stop_locked();
  pthread_mutex_unlock(&plugin_lock);
}

/* Process exit or dlclose: the engine threads and temp dirs go with the module. At exit the atexit handler that
 * start_tree registers runs first (before destructors and the temp-tree handler of mock_sysfs.c, registered
 * earlier), so the GPUs stop before their dirs go. */
__attribute__((destructor)) static void plugin_fini(void) { plugin_stop(); }

static int fail(char *err, size_t errlen, int code, const char *msg, const char *arg) {
  snprintf(err, errlen, "mock plugin: %s%s", msg, arg ? arg : "");
  return -code;
}

static int env_int(const char *name, int def, int lo, int hi, bool *ok) {
  const char *v = getenv(name);
  if (!v || !*v) return def;
  char *end;
  long n = strtol(v, &end, 10);
  if (*end || n < lo || n > hi) *ok = false;
  return (int)n;
}

/* Configuration, tree and firmware: once per process (or after stop). */
static int start_tree(const bg_mock_host *host, bool nv, char *err, size_t errlen) {
  const char *chip_s = getenv("MOCKGPU_CHIP");
  mock_amd_chip chip = MOCK_AMD_GFX11;
  fw_gen_chip_id gen = FW_GEN_GFX11;
  if (nv) {
#ifdef BG_MOCK_NVPCI
    if (chip_s && *chip_s && nvpci_chip_find(chip_s) < 0)
      return fail(err, errlen, BG_EINVAL, "MOCKGPU_CHIP must be ga102, ad102, gh100 or gb202 for NV GPUs, not ", chip_s);
    snprintf(S.nv_chip, sizeof(S.nv_chip), "%s", chip_s && *chip_s ? chip_s : "ga102");
#endif
  } else if (chip_s && *chip_s && strcmp(chip_s, "gfx11") != 0) {
    if (strcmp(chip_s, "gfx12") == 0) chip = MOCK_AMD_MOCK, gen = FW_GEN_GFX12;
    else if (strcmp(chip_s, "gfx942") == 0) chip = MOCK_AMD_GFX942, gen = FW_GEN_GFX942;
    else return fail(err, errlen, BG_EINVAL, "MOCKGPU_CHIP must be gfx11, gfx12 or gfx942, not ", chip_s);
  }
  /* MOCKGPU_SHARED=1: the GPUs' state in memory shared with the children forked after start (mock_shm.h), so a
   * killed child leaves the hardware as it was for the next one (tests/stress/kill.c). Before any GPU exists. */
  int shared = mock_shm_env();
  if (shared < 0) return fail(err, errlen, BG_EINVAL, "MOCKGPU_SHARED must be 0 or 1, not ", getenv("MOCKGPU_SHARED"));
  if (shared && nv) /* the NV models keep their state in the process (not in mock_shm's arena) */
    return fail(err, errlen, BG_ENOTSUP, "MOCKGPU_SHARED=1 is not supported for NV GPUs", NULL);
  if (shared && mock_shm_init(MOCK_SHM_ARENA) != 0)
    return fail(err, errlen, BG_ENOMEM, "cannot map the shared arena of MOCKGPU_SHARED", NULL);
  /* MOCKGPU_HDP=strict (default: host BAR0 writes reach the engines at an HDP flush) or coherent (amd_hdp.h) */
  const char *hdp_s = getenv("MOCKGPU_HDP");
  bool hdp_coherent = hdp_s && !strcmp(hdp_s, "coherent");
  if (hdp_s && !hdp_coherent && strcmp(hdp_s, "strict"))
    return fail(err, errlen, BG_EINVAL, "MOCKGPU_HDP must be strict or coherent, not ", hdp_s);
  /* MOCKGPU_TOPOLOGY=switch (default: one root port and a PCIe switch, a downstream port per GPU) or split (a root
   * complex per GPU: peer-to-peer between them is not routed); mock_sysfs.h "Topology". */
  const char *topo_s = getenv("MOCKGPU_TOPOLOGY");
  mock_topology topo;
  if (mock_topology_parse(topo_s, &topo) < 0)
    return fail(err, errlen, BG_EINVAL, "MOCKGPU_TOPOLOGY must be switch or split, not ", topo_s);
  bool ok = true;
  int count = env_int("MOCKGPU_COUNT", 1, 1, BG_MOCK_MAX_DEVICES, &ok);
  /* gfx942: the driver keeps the top 384 MiB of a big part's VRAM (am/discovery.c reserved_vram_size), and runs three
   * 16 MiB rings (PM4, AQL, SDMA): 1 GiB leaves the conformance suite its 64 MiB copies (an MI300X has 192 GiB). */
  int vram_mb = env_int("MOCKGPU_VRAM_MB", chip == MOCK_AMD_GFX942 ? 1024 : 512, 64, 1 << 20, &ok);
  if (!ok || (vram_mb & (vram_mb - 1)))
    return fail(err, errlen, BG_EINVAL, "MOCKGPU_COUNT must be 1..8 and MOCKGPU_VRAM_MB a power of two >= 64", NULL);
  if (nv && vram_mb < 256) /* GSP-RM's heap and WPR need room (tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw) */
    return fail(err, errlen, BG_EINVAL, "MOCKGPU_VRAM_MB must be a power of two >= 256 for NV GPUs", NULL);
  char *saved[NENV];
  for (size_t i = 0; i < NENV; i++) {
    const char *v = getenv(ENV_KEPT[i]);
    saved[i] = v ? strdup(v) : NULL;
  }
  mock_sysfs_use_set_hooks(host->pci_set_hooks);
  S.tree = mock_sysfs_new();
  for (size_t i = 0; i < NENV; i++) { /* the tree's own env is for in-process tests; the library gets paths */
    if (saved[i]) setenv(ENV_KEPT[i], saved[i], 1);
    else unsetenv(ENV_KEPT[i]);
    free(saved[i]);
  }
  if (!S.tree) return fail(err, errlen, BG_EIO, "cannot build the fake sysfs tree", NULL);
  S.started = true; /* from here on stop_locked cleans up */
  S.owner = getpid();
  static bool registered;
  if (!registered) registered = atexit(plugin_stop) == 0;
  S.chip = chip, S.nv = nv, S.count = count, S.vram_mb = vram_mb, S.hdp_coherent = hdp_coherent, S.topo = topo;
  if (mock_tmpdir_new("fw", S.fw_dir, sizeof(S.fw_dir)) != 0) /* swept after a killed run, removed at exit */
    return fail(err, errlen, BG_EIO, "cannot create the firmware dir", NULL);
  if (!nv && fw_gen_chip(S.fw_dir, gen) != 0) return fail(err, errlen, BG_EIO, "firmware generation failed in ", S.fw_dir);
  return 0; /* NV: each GPU model generates its chip's firmware (start_nv_gpu) */
}

#ifdef BG_MOCK_NVPCI
/* One emulated NVIDIA GPU with its GSP-RM model; the first writes the chip's firmware folder. */
static int start_nv_gpu(mock_set *m, int i, char *err, size_t errlen) {
  const char *bdf = m->devs.bdf[i];
  nvpci_cfg cfg = {.chip = S.nv_chip, .bdf = bdf, .vram_size = (uint64_t)S.vram_mb << 20, .fuse_version = 1};
  if (!(m->nvg[i] = nvpci_new(S.tree, &cfg))) return fail(err, errlen, BG_EIO, "cannot create the emulated GPU ", bdf);
  m->devs.count = i + 1;
  if (!(m->nvs[i] = nvpci_gsp_new(m->nvg[i])))
    return fail(err, errlen, BG_EIO, "cannot create the GSP-RM model of ", bdf);
  nvpci_set_gsp(m->nvg[i], m->nvs[i]);
  if (i == 0 && nvpci_write_firmware(m->nvg[i], S.fw_dir) < 0)
    return fail(err, errlen, BG_EIO, "firmware generation failed: ", nvpci_failures(m->nvg[i]));
  return 0;
}
#endif

/* The GPUs of one interface (usb: each behind a bridge). */
static int start_set(bool usb, char *err, size_t errlen) {
  mock_set *m = &S.set[usb];
  /* MOCKPCI GPUs sit below root ports and switches (MOCKGPU_TOPOLOGY); MOCKUSB GPUs are reached over USB, flat. */
  if (!usb && mock_sysfs_gpu_topology(S.tree, S.topo, S.count, m->devs.bdf) < 0)
    return fail(err, errlen, BG_EIO, "cannot build the PCI hierarchy of MOCKGPU_TOPOLOGY: ", mock_sysfs_failures(S.tree));
  for (int i = 0; i < S.count; i++) {
    char *bdf = m->devs.bdf[i];
    if (usb) snprintf(bdf, sizeof(m->devs.bdf[i]), "0000:%02x:00.0", (unsigned)(0x13 + i) & 0xffu);
#ifdef BG_MOCK_NVPCI
    if (S.nv) {
      int r = start_nv_gpu(m, i, err, errlen);
      if (r < 0) return r;
      if (usb && !(m->bridge[i] = mock_asm24_new(nvpci_pci(m->nvg[i]))))
        return fail(err, errlen, BG_EIO, "cannot create the emulated ASM24 bridge in front of ", bdf);
      continue;
    }
#endif
    mock_amd_cfg cfg = {.chip = S.chip, .bdf = bdf, .vram_size = (uint64_t)S.vram_mb << 20, .hdp_coherent = S.hdp_coherent};
    m->gpu[i] = mock_amd_new(S.tree, &cfg);
    if (!m->gpu[i]) return fail(err, errlen, BG_EIO, "cannot create the emulated GPU ", bdf);
    m->devs.count = i + 1;
    if (mock_amd_install_fw_dir(m->gpu[i], S.fw_dir) != 0)
      return fail(err, errlen, BG_EIO, "firmware refused by the emulated GPU: ", mock_amd_failures(m->gpu[i]));
    if (usb && !(m->bridge[i] = mock_asm24_new(mock_amd_pci(m->gpu[i]))))
      return fail(err, errlen, BG_EIO, "cannot create the emulated ASM24 bridge in front of ", bdf);
  }
  /* bridge i: MOCKUSB_SEED + i (asm24.h), so two bridges do not service their endpoints in lockstep */
  for (int i = 0; usb && i < S.count; i++) {
    uint64_t seed = mock_asm24_get_seed(m->bridge[i]);
    if (seed) mock_asm24_set_seed(m->bridge[i], seed + (uint64_t)i);
  }
  snprintf(m->devs.fw_dir, sizeof(m->devs.fw_dir), "%s", S.fw_dir);
  snprintf(m->devs.sysfs_root, sizeof(m->devs.sysfs_root), "%s", mock_sysfs_root(S.tree));
  snprintf(m->devs.lock_dir, sizeof(m->devs.lock_dir), "%s/lock", mock_sysfs_root(S.tree));
  m->started = true;
  return 0;
}

static int plugin_start(const bg_mock_host *host, const char *iface, const char *kind, bg_mock_devices *out, char *err,
                        size_t errlen) {
  if (!host || host->abi != BG_MOCK_PLUGIN_ABI || !host->pci_set_hooks || !out)
    return fail(err, errlen, BG_EINVAL, "host ABI mismatch or missing pci_set_hooks", NULL);
  if (iface && strcmp(iface, "MOCKNVK") == 0) {
    if (!kind || strcmp(kind, "NV") != 0)
      return fail(err, errlen, BG_ENOTSUP, "MOCKNVK emulates NVIDIA GPUs (NV), not ", kind ? kind : "(null)");
    pthread_mutex_lock(&plugin_lock);
    int r = mock_nv_start(out, err, errlen);
    pthread_mutex_unlock(&plugin_lock);
    return r;
  }
  bool usb = iface && strcmp(iface, "MOCKUSB") == 0;
  if (!iface || (!usb && strcmp(iface, "MOCKPCI") != 0))
    return fail(err, errlen, BG_ENOTSUP, "only MOCKPCI, MOCKUSB and MOCKNVK are emulated by this module, not ",
                iface ? iface : "(null)");
  bool nv = kind && strcmp(kind, "NV") == 0;
  if (!kind || (!nv && strcmp(kind, "AMD") != 0))
    return fail(err, errlen, BG_ENOTSUP, "MOCKPCI and MOCKUSB emulate AMD or NV GPUs, not ", kind ? kind : "(null)");
#ifndef BG_MOCK_NVPCI
  if (nv)
    return fail(err, errlen, BG_ENOTSUP, "this module was built without the emulated NVIDIA PCI GPU's GSP-RM model "
                "(tests/mockgpu/nv_pci): no NV on ", iface);
#endif
  pthread_mutex_lock(&plugin_lock);
  bool fresh = !S.started;
  if (S.started && S.nv != nv) {
    pthread_mutex_unlock(&plugin_lock);
    return fail(err, errlen, BG_EBUSY, S.nv ? "this process's emulated GPUs are NV, not AMD, on "
                                             : "this process's emulated GPUs are AMD, not NV, on ", iface);
  }
  int r = S.started ? 0 : start_tree(host, nv, err, errlen);
  if (r == 0 && !S.set[usb].started) r = start_set(usb, err, errlen);
  if (r < 0 && fresh) stop_locked(); /* a failure never takes down devices an earlier start handed out */
  else if (r == 0) *out = S.set[usb].devs;
  pthread_mutex_unlock(&plugin_lock);
  return r;
}

static int plugin_usb_transport(int index, bg_usb_transport **out, char *err, size_t errlen) {
  *out = NULL;
  pthread_mutex_lock(&plugin_lock);
  const mock_set *m = &S.set[1];
  int r = 0;
  if (!m->started) r = fail(err, errlen, BG_ENODEV, "MOCKUSB was not started", NULL);
  else if (index < 0 || index >= m->devs.count) r = fail(err, errlen, BG_ENODEV, "no such MOCKUSB device", NULL);
  else if (!(*out = mock_asm24_transport(m->bridge[index])))
    r = fail(err, errlen, BG_ENOMEM, "out of memory for a transport", NULL);
  pthread_mutex_unlock(&plugin_lock);
  return r;
}

static uint64_t plugin_exec_ns(void) {
  uint64_t ns = 0;
  pthread_mutex_lock(&plugin_lock);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < S.set[k].devs.count; i++)
      if (S.set[k].gpu[i]) ns += mock_amd_exec_ns(S.set[k].gpu[i]);
  ns += mock_nv_exec_ns();
  pthread_mutex_unlock(&plugin_lock);
  return ns;
}

/* Fault injection (ABI 4): one row per kind; fn gets the started set and a valid index. usb_only: MOCKUSB only. */
typedef int (*inject_fn)(mock_set *m, int index, unsigned count, char *err, size_t errlen);

/* The GPU ignores the next count doorbell writes (amd_engine.c); over MOCKUSB they cross the bridge first. */
static int inject_doorbell_drop(mock_set *m, int index, unsigned count, char *err, size_t errlen) {
  if (!m->gpu[index] || mock_amd_inject_doorbell_drop(m->gpu[index], count) < 0)
    return fail(err, errlen, BG_ENOTSUP, "inject: doorbell-drop: this chip has no queue engines: ", m->devs.bdf[index]);
  return 0;
}

/* The CP ignores the next count dequeue requests: the compute queue cannot be reset, only a mode1 reset helps. */
static int inject_hqd_stuck(mock_set *m, int index, unsigned count, char *err, size_t errlen) {
  if (!m->gpu[index] || mock_amd_inject_hqd_stuck(m->gpu[index], count) < 0)
    return fail(err, errlen, BG_ENOTSUP, "inject: hqd-stuck: this chip has no CP model: ", m->devs.bdf[index]);
  return 0;
}

/* usb-stall: the next count bulk transfers of the bridge stall (halt or timeout, before or after the command ran;
 * asm24.h mock_asm24_inject_stall), which the driver recovers from in place (usb/asm24.c bg_asm24_run). */
static int inject_usb_stall(mock_set *m, int index, unsigned count, char *err, size_t errlen) {
  (void)err, (void)errlen;
  mock_asm24_inject_stall(m->bridge[index], count);
  return 0;
}

/* "kill-reg-write": the calling process SIGKILLs itself just before its count-th GPU register write from now, on any
 * device (mock_shm.h): a process killed at that exact step of bring-up, for tests/stress/kill.c. */
static int inject_kill(mock_set *m, int index, unsigned count, char *err, size_t errlen) {
  (void)m, (void)index, (void)err, (void)errlen;
  mock_shm_kill_after(count);
  return 0;
}

static const struct inject_kind {
  const char *kind;
  bool usb_only;
  inject_fn fn;
} INJECT[] = {
    {"doorbell-drop", false, inject_doorbell_drop},
    {"hqd-stuck", false, inject_hqd_stuck},
    {"usb-stall", true, inject_usb_stall},
    {"kill-reg-write", false, inject_kill},
    {NULL, false, NULL},
};

static int plugin_inject(const char *iface, int index, const char *kind, unsigned count, char *err, size_t errlen) {
  bool usb = iface && !strcmp(iface, "MOCKUSB");
  if (!iface || (!usb && strcmp(iface, "MOCKPCI")))
    return fail(err, errlen, BG_EINVAL, "inject: iface must be MOCKPCI or MOCKUSB, not ", iface ? iface : "(null)");
  const struct inject_kind *k = INJECT;
  while (k->kind && (!kind || strcmp(k->kind, kind))) k++;
  if (!k->kind || (k->usb_only && !usb)) {
    char known[256] = "";
    for (const struct inject_kind *j = INJECT; j->kind; j++)
      snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s%s", known[0] ? ", " : "", j->kind,
               j->usb_only ? " (MOCKUSB)" : "");
    snprintf(err, errlen, "inject: unknown fault kind '%s' on %s; known: %s", kind ? kind : "(null)", iface,
             known[0] ? known : "none");
    return -BG_EINVAL;
  }
  pthread_mutex_lock(&plugin_lock);
  mock_set *m = &S.set[usb];
  int r = 0;
  if (!m->started) r = fail(err, errlen, BG_ENODEV, "inject: not started: ", iface);
  else if (index < 0 || index >= m->devs.count) r = fail(err, errlen, BG_ENODEV, "inject: no such device on ", iface);
  else r = k->fn(m, index, count, err, errlen);
  pthread_mutex_unlock(&plugin_lock);
  return r;
}

/* Shader statistics (ABI 5): the device's cumulative counters (amd_gpu.h mock_amd_shader_stats). */
static int plugin_shader_stats(const char *iface, int index, bg_mock_shader_stats *out, char *err, size_t errlen) {
  memset(out, 0, sizeof(*out));
  bool usb = iface && !strcmp(iface, "MOCKUSB");
  if (!iface || (!usb && strcmp(iface, "MOCKPCI")))
    return fail(err, errlen, BG_EINVAL, "shader_stats: iface must be MOCKPCI or MOCKUSB, not ", iface ? iface : "(null)");
  pthread_mutex_lock(&plugin_lock);
  mock_set *m = &S.set[usb];
  int r = 0;
  if (!m->started) r = fail(err, errlen, BG_ENODEV, "shader_stats: not started: ", iface);
  else if (index < 0 || index >= m->devs.count) r = fail(err, errlen, BG_ENODEV, "shader_stats: no such device on ", iface);
  else if (!m->gpu[index]) r = fail(err, errlen, BG_ENOTSUP, "shader_stats: the emulated NV GPUs count no shader work on ", iface);
  else {
    mock_amd_shader_stats s;
    mock_amd_shader_stats_get(m->gpu[index], &s);
    *out = (bg_mock_shader_stats){
        .dispatches = s.dispatches, .waves = s.waves, .wave_insts = s.wave_insts, .valu_insts = s.valu_insts,
        .salu_insts = s.salu_insts, .vmem_insts = s.vmem_insts, .lds_insts = s.lds_insts, .wmma_insts = s.wmma_insts,
        .global_load_bytes = s.global_load_bytes, .global_store_bytes = s.global_store_bytes,
        .lds_load_bytes = s.lds_load_bytes, .lds_store_bytes = s.lds_store_bytes,
        .lds_bank_conflict_cycles = s.lds_bank_conflict_cycles};
  }
  pthread_mutex_unlock(&plugin_lock);
  return r;
}

static const bg_mock_plugin PLUGIN = {BG_MOCK_PLUGIN_ABI,      plugin_start,   plugin_stop,
                                      plugin_usb_transport,    plugin_exec_ns, mock_nv_plugin_sys,
                                      mock_nv_plugin_assemble, plugin_inject,  plugin_shader_stats};

BG_EXPORT const bg_mock_plugin *bg_mock_plugin_entry(void);
BG_EXPORT const bg_mock_plugin *bg_mock_plugin_entry(void) { return &PLUGIN; }
