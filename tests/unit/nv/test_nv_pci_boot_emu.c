/* tests/unit/nv/test_nv_pci_boot_emu.c: part 2 of nv-pci-boot (test_nv_pci_boot.c has part 1 and main): the driver
 * (nv/nv_pci.h) on the emulated GPUs of tests/mockgpu/nv_pci, in process, so the test sees the emulator's failures,
 * stage, RPC counts and every BAR0 write (a wrapper around the GPU's register hook counts them). Kept apart from
 * part 1 because the emulator's register names (nvpci_internal.h) are its own and clash with nv/nv_regs.h. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check_helpers.h"
#include "asm24.h"
#include "baregpu/error.h"
#include "mock_internal.h"
#include "mock_sysfs.h"
#include "nv/nv_falcon.h"
#include "nv/nv_pci.h"
#include "nv/nv_pci_hcq.h"
#include "nvpci_internal.h"
#include "platform/mock_plugin.h"
#include "platform/pci_usb.h"

void nv_pci_boot_emu_tests(Suite *s);

#include "mock_internal.h"
#include "mock_sysfs.h"
#include "nvpci_internal.h"
#include "platform/mock_plugin.h"

#define BDF "0000:05:00.0"

typedef struct bed {
  mock_sysfs *tree;
  nvpci_gpu *g;
  nvpci_gsp *gsp;
  mock_asm24 *bridge; /* the GPU behind an emulated ASM24 bridge (bed_new_usb), as MOCKUSB+NV puts it */
  bg_pci_dev *pci;
  char dir[256];
  /* every BAR0 write the emulated GPU sees, counted by a wrapper around its register hook */
  mock_pci_rd_fn rd;
  mock_pci_wr_fn wr;
  void *user;
  uint64_t bar0_writes;
} bed;

static void bed_wr(void *user, mock_pci *m, int bar, uint64_t off, uint64_t v, unsigned size) {
  bed *b = user;
  b->bar0_writes++;
  b->wr(b->user, m, bar, off, v, size);
}

static uint64_t bed_rd(void *user, mock_pci *m, int bar, uint64_t off, unsigned size) {
  bed *b = user;
  return b->rd(b->user, m, bar, off, size);
}

static void bed_new_gpu(bed *b, const char *chip, uint32_t fuse, bool small_bar) {
  memset(b, 0, sizeof(*b));
  b->tree = mock_sysfs_new();
  ck_assert_ptr_nonnull(b->tree);
  nvpci_cfg cfg = {.chip = chip, .bdf = BDF, .vram_size = 512ull << 20, .fuse_version = fuse, .small_bar = small_bar};
  b->g = nvpci_new(b->tree, &cfg);
  ck_assert_ptr_nonnull(b->g);
  b->gsp = nvpci_gsp_new(b->g);
  ck_assert_ptr_nonnull(b->gsp);
  nvpci_set_gsp(b->g, b->gsp);
  OK(mock_tmpdir_new("nvboot", b->dir, sizeof(b->dir)));
  OK(nvpci_write_firmware(b->g, b->dir));
  mock_pci *m = nvpci_pci(b->g);
  for (size_t i = 0; i < m->nhooks; i++)
    if (m->hooks[i].bar == 0) {
      b->rd = m->hooks[i].rd, b->wr = m->hooks[i].wr, b->user = m->hooks[i].user;
      m->hooks[i].rd = bed_rd, m->hooks[i].wr = bed_wr, m->hooks[i].user = b;
    }
  ck_assert_ptr_nonnull(b->wr);
}

static void bed_new_cfg(bed *b, const char *chip, uint32_t fuse, bool small_bar) {
  bed_new_gpu(b, chip, fuse, small_bar);
  OK(bg_pci_open_sysfs(BDF, 0, &b->pci));
}

/* The same GPU behind an emulated ASM24 bridge, opened through the library's USB PCI device (usb/usb_pci.c): BAR
 * views are bridge requests and system memory is the bridge's 512 KiB SRAM. */
static void bed_new_usb(bed *b, const char *chip) {
  bed_new_gpu(b, chip, 1, false);
  b->bridge = mock_asm24_new(nvpci_pci(b->g));
  ck_assert_ptr_nonnull(b->bridge);
  OK(bg_usb_pci_open(mock_asm24_transport(b->bridge), &b->pci));
  ck_assert(bg_pci_features(b->pci) & BG_PCI_FEAT_NO_HOST_DMA);
}

static void bed_new_fuse(bed *b, const char *chip, uint32_t fuse) { bed_new_cfg(b, chip, fuse, false); }
static void bed_new(bed *b, const char *chip) { bed_new_fuse(b, chip, 1); }

static void bed_free(bed *b) {
  bg_pci_close(b->pci);
  if (b->bridge) {
    ck_assert_msg(mock_asm24_nfail(b->bridge) == 0, "emulated bridge failures: %s", mock_asm24_failures(b->bridge));
    mock_asm24_free(b->bridge);
  }
  ck_assert_msg(nvpci_nfail(b->g) == 0, "emulated GPU failures: %s", nvpci_failures(b->g));
  ck_assert_msg(mock_sysfs_nfail(b->tree) == 0, "emulated PCI failures: %s", mock_sysfs_failures(b->tree));
  nvpci_gsp_free(b->gsp);
  nvpci_free(b->g);
  mock_rm_tree(b->dir);
  mock_sysfs_free(b->tree);
}

static const bg_nv_boot_step *step(const bg_nv_pci *d, const char *name) {
  for (unsigned i = 0; i < d->nsteps; i++)
    if (strcmp(d->steps[i].name, name) == 0) return &d->steps[i];
  ck_abort_msg("no step '%s'", name);
  return NULL;
}

/* Boot memory lies in VRAM behind BAR1 (the firmware is given BAR1's bus address + the VRAM address). */
static void in_bar1(const bg_nv_pci *d, const bg_sysmem *m, const char *what) {
  if (!m->bus) return; /* not used by this chip's boot */
  for (size_t i = 0; i < m->npages; i++)
    ck_assert_msg(m->bus[i] >= d->bar1_bus && m->bus[i] - d->bar1_bus < d->bar1_size,
                  "%s page %zu at bus 0x%llx: not in BAR1 [0x%llx, +0x%llx)", what, i, (unsigned long long)m->bus[i],
                  (unsigned long long)d->bar1_bus, (unsigned long long)d->bar1_size);
}

static void cold_boot_on(const char *chip, const char *const *names, bool usb) {
  bed b;
  if (usb) bed_new_usb(&b, chip);
  else bed_new(&b, chip);
  bg_nv_pci *d = NULL;
  OK(bg_nv_pci_open(b.pci, b.dir, &d));
  ck_assert(d->no_host_dma == usb);
  if (usb) { /* every boot structure in VRAM: the bridge's SRAM cannot hold the 0x81000 bytes of queues */
    in_bar1(d, &d->msgq_mem, "message queues");
    in_bar1(d, &d->libos_mem, "libos arguments and logs");
    in_bar1(d, &d->rmargs_mem, "GSP_ARGUMENTS_CACHED");
    in_bar1(d, &d->radix3_mem, "radix-3 tree");
    in_bar1(d, &d->bootloader_mem, "bootloader");
    in_bar1(d, &d->sig_mem, "signature");
    in_bar1(d, &d->wpr_meta_mem, "WPR metadata");
    in_bar1(d, &d->fmc_mem, "FMC image");
    ck_assert_uint_eq(d->msgq_mem.npages, (0x1000 + 2 * BG_NV_GSP_QUEUE_SIZE) / 4096);
  }
  ck_assert_msg(nvpci_nfail(b.g) == 0, "emulated GPU failures: %s", nvpci_failures(b.g));
  ck_assert(!d->warm);
  ck_assert_int_eq(nvpci_stage(b.g), NVPCI_STAGE_INIT_DONE);
  ck_assert_str_eq(d->chip->fw_dir, chip);
  ck_assert_uint_eq(d->vram_size, 512ull << 20);
  ck_assert_uint_eq(d->client, 0xc1e00004u);
  /* the steps, in order, and their counts add up to the device's */
  unsigned n = 0;
  uint64_t r = 0, w = 0, rpc = 0;
  while (names[n]) n++;
  ck_assert_uint_eq(d->nsteps, n);
  for (unsigned i = 0; i < n; i++) {
    ck_assert_str_eq(d->steps[i].name, names[i]);
    r += d->steps[i].reg_reads, w += d->steps[i].reg_writes, rpc += d->steps[i].rpcs;
  }
  ck_assert_uint_eq(r, d->reg_reads);
  ck_assert_uint_eq(w, d->reg_writes);
  ck_assert_uint_eq(w, b.bar0_writes); /* every write went through bg_nv_wr32 */
  /* nothing written to BAR0 before the chip's boot; firmware read without touching the device */
  ck_assert_uint_eq(step(d, "firmware")->reg_reads + step(d, "firmware")->reg_writes, 0);
  ck_assert_uint_eq(step(d, "boot structures")->reg_writes, 0);
  if (!d->chip->fsp_boot) {
    ck_assert_uint_eq(step(d, "VBIOS")->reg_writes, 0);
    /* the PROM window as far as the ROM's image chain goes (the generated ROM: 128 KiB), not its 1 MiB; + the fuse */
    ck_assert_uint_eq(step(d, "VBIOS")->reg_reads, b.g->fw.vbios.n / 4 + 1);
  }
  ck_assert_uint_eq(step(d, "boot structures")->rpcs, 2);   /* SET_SYSTEM_INFO, SET_REGISTRY pre-queued */
  ck_assert_uint_eq(step(d, "RM objects")->rpcs, 3);        /* root, device, subdevice */
  ck_assert_uint_eq(step(d, "VA space")->rpcs, 2);          /* FERMI_VASPACE_A, SET_PAGE_DIRECTORY */
  ck_assert_uint_eq(step(d, "BAR1 physical mode")->reg_writes, 1);
  ck_assert_uint_eq(rpc, d->gsp.q.sent);
  uint64_t served = nvpci_gsp_rpcs(b.gsp);
  ck_assert_uint_ge(served, 3); /* RM: root, device, subdevice (the pre-queued two are not counted) */
  bg_nv_pci_close(d);
  ck_assert_uint_gt(nvpci_gsp_rpcs(b.gsp), served); /* RM free and UNLOADING_GUEST_DRIVER reached GSP */
  bed_free(&b);
}

static void cold_boot(const char *chip, const char *const *names) { cold_boot_on(chip, names, false); }

static const char *const FLCN_STEPS[] = {"early init", "firmware", "GFW boot wait", "boot structures", "VBIOS",
                                         "FWSEC-FRTS",
                                         "Booter", "GSP init done", "BAR1 physical mode", "RM objects", "VA space", NULL};
static const char *const FSP_STEPS[] = {"early init", "firmware", "FSP boot wait", "boot structures",
                                        "FSP chain of trust", "GSP init done", "BAR1 physical mode", "RM objects",
                                        "VA space", NULL};

START_TEST(cold_ga102) {
  cold_boot("ga102", FLCN_STEPS);
}
END_TEST
START_TEST(cold_ad102) {
  cold_boot("ad102", FLCN_STEPS);
}
END_TEST
START_TEST(cold_gh100) {
  cold_boot("gh100", FSP_STEPS);
}
END_TEST
START_TEST(cold_gb202) {
  cold_boot("gb202", FSP_STEPS);
}
END_TEST


/* ---------------- over the USB bridge (MOCKUSB+NV): no host DMA, every boot structure in VRAM ---------------- */

START_TEST(usb_cold_ga102) {
  cold_boot_on("ga102", FLCN_STEPS, true);
}
END_TEST
START_TEST(usb_cold_gh100) {
  cold_boot_on("gh100", FSP_STEPS, true);
}
END_TEST

/* The VBIOS step over the bridge: its dword count is the ROM's, and the bridge moves it in a few streamed reads
 * (one bridge round trip each), not one request per dword. */
START_TEST(usb_vbios_round_trips) {
  bed b;
  bed_new_usb(&b, "ad102");
  mock_asm24_reset_stats(b.bridge);
  bg_nv_pci *d = NULL;
  OK(bg_nv_pci_open(b.pci, b.dir, &d));
  const bg_nv_boot_step *v = step(d, "VBIOS");
  ck_assert_uint_eq(v->reg_reads, b.g->fw.vbios.n / 4 + 1);
  const mock_asm24_stats *st = mock_asm24_get_stats(b.bridge);
  /* each register read outside the VBIOS step is one streamed read; the VBIOS (32768 dwords) and the queue syncs
   * take a few dozen more, not one per dword (register writes go as single MWr TLPs: usb/asm24.c) */
  ck_assert_uint_lt(st->stream_reads, d->reg_reads - v->reg_reads + 64);
  ck_assert_int_eq(nvpci_stage(b.g), NVPCI_STAGE_INIT_DONE);
  printf("nv-pci-boot: ad102 over USB: %llu register reads, %llu writes, %llu RPCs; bridge: %llu memory TLPs, %llu "
         "stream reads, %llu stream writes, %llu config TLPs\n", (unsigned long long)d->reg_reads,
         (unsigned long long)d->reg_writes, (unsigned long long)d->gsp.q.sent, (unsigned long long)st->mem_tlps,
         (unsigned long long)st->stream_reads, (unsigned long long)st->stream_writes,
         (unsigned long long)st->cfg_tlps);
  for (unsigned i = 0; i < d->nsteps; i++)
    printf("  %-20s %8llu reads %6llu writes %3llu RPCs\n", d->steps[i].name,
           (unsigned long long)d->steps[i].reg_reads, (unsigned long long)d->steps[i].reg_writes,
           (unsigned long long)d->steps[i].rpcs);
  bg_nv_pci_close(d);
  bed_free(&b);
}
END_TEST

/* ---------------- bad firmware: a clear error, nothing written ---------------- */

static void copy_file(const char *from, const char *to) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), a)) > 0) ck_assert_uint_eq(fwrite(buf, 1, n, b), n);
  fclose(a);
  fclose(b);
}

/* The bed's firmware copied into a second folder, one file damaged by how: 't' truncated to 16 bytes, 'm' its first
 * byte flipped (ELF / nvfw_bin_hdr magic), 'r' removed. */
static void bad_firmware(const char *chip, const char *file, char how, int code, const char *needle) {
  bed b;
  bed_new(&b, chip);
  char dir[256], from[600], to[600];
  OK(mock_tmpdir_new("nvbadfw", dir, sizeof(dir)));
  static const char *const FILES[] = {"gsp-570.144.bin", "bootloader-570.144.bin", "booter_load-570.144.bin",
                                      "fmc-570.144.bin"};
  for (size_t i = 0; i < sizeof(FILES) / sizeof(FILES[0]); i++) {
    snprintf(from, sizeof(from), "%s/%s", b.dir, FILES[i]);
    snprintf(to, sizeof(to), "%s/%s", dir, FILES[i]);
    if (access(from, R_OK) == 0) copy_file(from, to);
  }
  snprintf(to, sizeof(to), "%s/%s", dir, file);
  if (how == 't') {
    ck_assert_int_eq(truncate(to, 16), 0);
  } else if (how == 'm') {
    FILE *f = fopen(to, "r+b");
    ck_assert_ptr_nonnull(f);
    int c = fgetc(f);
    fseek(f, 0, SEEK_SET);
    fputc(c ^ 0xff, f);
    fclose(f);
  } else {
    ck_assert_int_eq(unlink(to), 0);
  }
  bg_nv_pci *d = NULL;
  int r = bg_nv_pci_open(b.pci, dir, &d);
  /* code 0: any error (nv_fw.h promises BG_ENOENT for a missing file; the loader currently returns BG_ENODEV) */
  ck_assert_msg(code ? r == -code : r < 0, "open -> %d (want %d): %s", r, -code, bg_last_error());
  ck_assert_msg(strstr(bg_last_error(), needle), "message '%s' lacks '%s'", bg_last_error(), needle);
  ck_assert_ptr_null(d);
  ck_assert_msg(strstr(bg_last_error(), "firmware"), "error '%s' does not name the step", bg_last_error());
  ck_assert_uint_eq(b.bar0_writes, 0); /* the device was not touched */
  ck_assert_int_eq(nvpci_stage(b.g), NVPCI_STAGE_COLD);
  /* and the untouched device still boots with good firmware */
  OK(bg_nv_pci_open(b.pci, b.dir, &d));
  bg_nv_pci_close(d);
  mock_rm_tree(dir);
  bed_free(&b);
}

/* Files whose headers parse but whose payload the GPU's boot ROM / FSP refuses: the driver reports the refusal
 * read back from the device (not just a later timeout). */
static void refused(const char *chip, const char *file, const char *needle) {
  bed b;
  bed_new(&b, chip);
  char dir[256], from[600], to[600];
  OK(mock_tmpdir_new("nvrefused", dir, sizeof(dir)));
  static const char *const FILES[] = {"gsp-570.144.bin", "bootloader-570.144.bin", "booter_load-570.144.bin",
                                      "fmc-570.144.bin"};
  for (size_t i = 0; i < sizeof(FILES) / sizeof(FILES[0]); i++) {
    snprintf(from, sizeof(from), "%s/%s", b.dir, FILES[i]);
    snprintf(to, sizeof(to), "%s/%s", dir, FILES[i]);
    if (access(from, R_OK) == 0) copy_file(from, to);
  }
  snprintf(to, sizeof(to), "%s/%s", dir, file);
  FILE *f = fopen(to, "r+b");
  ck_assert_ptr_nonnull(f);
  fseek(f, 0, SEEK_END);
  long mid = ftell(f) / 2;
  fseek(f, mid, SEEK_SET);
  int c = fgetc(f);
  fseek(f, mid, SEEK_SET);
  fputc(c ^ 0x5a, f);
  fclose(f);
  bg_nv_pci *d = NULL;
  int r = bg_nv_pci_open(b.pci, dir, &d);
  ck_assert_msg(r < 0, "open with %s damaged succeeded", file);
  ck_assert_msg(strstr(bg_last_error(), needle), "message '%s' lacks '%s'", bg_last_error(), needle);
  ck_assert_int_lt(nvpci_stage(b.g), NVPCI_STAGE_GSP_RUNNING);
  nvpci_clear_failures(b.g); /* the emulator recorded the refusal it answered with */
  mock_rm_tree(dir);
  bed_free(&b);
}

START_TEST(refused_fmc) {
  refused("gh100", "fmc-570.144.bin", "FSP rejected the chain-of-trust command: errorCode");
}
END_TEST
START_TEST(refused_booter) {
  refused("ga102", "booter_load-570.144.bin", "Booter on SEC2 failed: NV_PFALCON_FALCON_MAILBOX0");
}
END_TEST

START_TEST(bad_booter_truncated) {
  bad_firmware("ga102", "booter_load-570.144.bin", 't', BG_EFORMAT, "booter_load-570.144.bin");
}
END_TEST
START_TEST(bad_fmc_magic) {
  bad_firmware("gh100", "fmc-570.144.bin", 'm', BG_EFORMAT, "fmc-570.144.bin");
}
END_TEST
START_TEST(bad_gsp_missing) {
  bad_firmware("ad102", "gsp-570.144.bin", 'r', 0, "gsp-570.144.bin not found");
}
END_TEST
START_TEST(bad_bootloader_magic) {
  bad_firmware("gb202", "bootloader-570.144.bin", 'm', BG_EFORMAT, "bootloader-570.144.bin");
}
END_TEST

/* ---------------- warm: a GSP left running by a process that died ---------------- */

static void warm(const char *chip) {
  bed b;
  bed_new(&b, chip);
  bg_nv_pci *d = NULL;
  OK(bg_nv_pci_open(b.pci, b.dir, &d));
  /* the process dies: its host memory goes, the GPU keeps running GSP-RM (no UNLOADING_GUEST_DRIVER) */
  bg_nv_priv(d)->gsp_up = false;
  bg_nv_pci_close(d);
  ck_assert_int_eq(nvpci_stage(b.g), NVPCI_STAGE_INIT_DONE);
  unsigned resets = nvpci_pci(b.g)->resets;
  OK(bg_nv_pci_open(b.pci, b.dir, &d));
  ck_assert(d->warm);
  ck_assert_uint_eq(nvpci_pci(b.g)->resets, resets + 1);
  ck_assert_int_eq(nvpci_stage(b.g), NVPCI_STAGE_INIT_DONE);
  ck_assert_uint_eq(d->client, 0xc1e00004u);
  bg_nv_pci_close(d);
  /* a clean close leaves it reusable: the next open resets (WPR2 stays until the function reset) and boots */
  OK(bg_nv_pci_open(b.pci, b.dir, &d));
  ck_assert_int_eq(nvpci_stage(b.g), NVPCI_STAGE_INIT_DONE);
  bg_nv_pci_close(d);
  bed_free(&b);
}

START_TEST(warm_ga102) {
  warm("ga102");
}
END_TEST
START_TEST(warm_gb202) {
  warm("gb202");
}
END_TEST

/* ---------------- a second process: the device-busy error, the booted GPU untouched ---------------- */

START_TEST(busy_second_process) {
  bed b;
  bed_new(&b, "gh100");
  bg_nv_pci *d = NULL;
  OK(bg_nv_pci_open(b.pci, b.dir, &d));
  uint64_t writes = b.bar0_writes;
  pid_t owner = getpid(), pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    bg_pci_dev *p2 = NULL;
    int e = bg_pci_open_sysfs(BDF, 0, &p2);
    char want[64];
    snprintf(want, sizeof(want), "in use by pid %d", (int)owner);
    _exit(e == -BG_EBUSY && strstr(bg_last_error(), want) && !p2 ? 0 : 1);
  }
  int st = 0;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the second process did not get BG_EBUSY naming pid %d", (int)owner);
  ck_assert_uint_eq(b.bar0_writes, writes); /* nothing reached the GPU */
  ck_assert_int_eq(nvpci_stage(b.g), NVPCI_STAGE_INIT_DONE);
  bg_nv_pci_close(d);
  bed_free(&b);
}
END_TEST

/* ---------------- a small BAR1 (256 MiB of 512): boot memory still inside what BAR1 shows ---------------- */

static void small_bar(const char *chip) {
  bed b;
  bed_new_cfg(&b, chip, 1, true);
  bg_nv_pci *d = NULL;
  OK(bg_nv_pci_open(b.pci, b.dir, &d));
  ck_assert(!d->large_bar);
  ck_assert_uint_eq(d->bar1_size, 256ull << 20);
  ck_assert_int_eq(nvpci_stage(b.g), NVPCI_STAGE_INIT_DONE);
  bg_nv_pci_close(d);
  bed_free(&b);
}

START_TEST(small_bar_ad102) {
  small_bar("ad102");
}
END_TEST
START_TEST(small_bar_gh100) {
  small_bar("gh100");
}
END_TEST

/* ---------------- the FWSEC signature the fuse picks (tinygrad always takes the last one: tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN.prep_ucode) */

START_TEST(fwsec_signature_by_fuse) {
  /* the emulated VBIOS signs FWSEC for fuse versions 0, 1 and 2; the emulated FWSEC refuses any other signature */
  for (uint32_t fuse = 0; fuse <= 2; fuse++) {
    bed b;
    bed_new_fuse(&b, "ga102", fuse);
    bg_nv_pci *d = NULL;
    OK(bg_nv_pci_open(b.pci, b.dir, &d));
    ck_assert_int_eq(nvpci_stage(b.g), NVPCI_STAGE_INIT_DONE);
    bg_nv_pci_close(d);
    bed_free(&b);
  }
  bed b;
  bed_new_fuse(&b, "ga102", 5); /* no signature for it: refused before the first register write */
  bg_nv_pci *d = NULL;
  ck_assert_int_lt(bg_nv_pci_open(b.pci, b.dir, &d), 0);
  ck_assert_msg(strstr(bg_last_error(), "FWSEC"), "error '%s' does not name FWSEC", bg_last_error());
  ck_assert_uint_eq(b.bar0_writes, 0);
  bed_free(&b);
}
END_TEST

/* ---------------- MOCKPCI+NV: the driver on the plugin's emulated GPU, as DEV=MOCKPCI+NV will reach it */

static void plugin_boot(const char *chip) {
  setenv("MOCKGPU_CHIP", chip, 1);
  bg_mock_devices md;
  OK(bg_mock_plugin_start("MOCKPCI", "NV", &md));
  ck_assert_int_ge(md.count, 1);
  setenv("BG_SYSFS_ROOT", md.sysfs_root, 1);
  if (md.lock_dir[0]) setenv("BG_LOCK_DIR", md.lock_dir, 1);
  bg_pci_dev *pci = NULL;
  OK(bg_pci_open_sysfs(md.bdf[0], 0, &pci));
  bg_nv_pci *d = NULL;
  OK(bg_nv_pci_open(pci, md.fw_dir, &d));
  ck_assert_str_eq(d->chip->fw_dir, chip);
  ck_assert_uint_eq(d->client, 0xc1e00004u);
  ck_assert_uint_eq(d->nsteps, (d->chip->fsp_boot ? 9u : 11u));
  bg_nv_pci_close(d);
  /* closed cleanly: GSP-RM unloaded but WPR2 stays until a reset; the next open resets and boots again */
  OK(bg_nv_pci_open(pci, md.fw_dir, &d));
  ck_assert(d->warm);
  bg_nv_pci_close(d);
  bg_pci_close(pci);
}

/* MOCKUSB+NV: the plugin's GPU behind its emulated bridge, as DEV=MOCKUSB+NV will reach it */
static void plugin_usb_boot(const char *chip) {
  setenv("MOCKGPU_CHIP", chip, 1);
  bg_mock_devices md;
  OK(bg_mock_plugin_start("MOCKUSB", "NV", &md));
  bg_usb_transport *t = NULL;
  OK(bg_mock_plugin_usb_transport(0, &t));
  bg_pci_dev *pci = NULL;
  OK(bg_usb_pci_open(t, &pci));
  bg_nv_pci *d = NULL;
  OK(bg_nv_pci_open(pci, md.fw_dir, &d));
  ck_assert(d->no_host_dma);
  ck_assert_str_eq(d->chip->fw_dir, chip);
  ck_assert_uint_eq(d->client, 0xc1e00004u);
  ck_assert_uint_eq(d->nsteps, (d->chip->fsp_boot ? 9u : 11u));
  bg_nv_pci_close(d);
  bg_pci_close(pci);
}

/* Reference quirk 10: tinygrad's promote_ctx evaluates `bufs.get(k, valloc(...))` eagerly, so the second PROMOTE_CTX
 * of a compute object (virtual side, buffers supplied) allocates three more context buffers and leaks them. The HCQ
 * open allocates each buffer once: the golden context's 9 context buffers and its ring, instance block and method
 * buffer (12), each user channel's instance block and method buffer (2 x 2), the compute channel's buffers 0, 1, 2
 * (3): 19, none more. */
START_TEST(hcq_context_buffers_once) {
  setenv("MOCKGPU_CHIP", "ga102", 1);
  bg_mock_devices md;
  OK(bg_mock_plugin_start("MOCKPCI", "NV", &md));
  setenv("BG_SYSFS_ROOT", md.sysfs_root, 1);
  if (md.lock_dir[0]) setenv("BG_LOCK_DIR", md.lock_dir, 1);
  bg_pci_dev *pci = NULL;
  OK(bg_pci_open_sysfs(md.bdf[0], 0, &pci));
  nv_gpu *g = NULL;
  OK(bg_nv_pci_gpu_open(pci, md.fw_dir, 0, "MOCKPCI", &g));
  ck_assert_uint_eq(g->pci->nbufs, 19);
  ck_assert_uint_ne(g->pci->golden_compute, 0);
  ck_assert_uint_ne(g->pci->reserved_va, 0);
  bg_nv_gpu_close(g); /* closes pci too */
}
END_TEST

START_TEST(plugin_usb_gb202) {
  plugin_usb_boot("gb202");
}
END_TEST
START_TEST(plugin_usb_ad102) {
  plugin_usb_boot("ad102");
}
END_TEST

START_TEST(plugin_gh100) {
  plugin_boot("gh100");
}
END_TEST
START_TEST(plugin_ga102) {
  plugin_boot("ga102");
}
END_TEST

/* ---------------- an unknown chip ---------------- */

START_TEST(unknown_chip_names_registers) {
  bed b;
  bed_new(&b, "ga102");
  nvpci_chip patched = NVPCI_CHIPS[NVPCI_GA102];
  patched.arch = 0x16; /* Turing: not in the table */
  b.g->c = &patched;
  bg_nv_pci *d = NULL;
  FAILS(bg_nv_pci_open(b.pci, b.dir, &d), BG_ENOTSUP, "unknown chip: NV_PMC_BOOT_0 = 0x");
  ck_assert_ptr_nonnull(strstr(bg_last_error(), "NV_PMC_BOOT_42 = 0x16"));
  ck_assert_uint_eq(b.bar0_writes, 0);
  b.g->c = &NVPCI_CHIPS[NVPCI_GA102];
  bed_free(&b);
}
END_TEST

void nv_pci_boot_emu_tests(Suite *s) {
  TCase *e = tcase_create("emulated");
  tcase_set_timeout(e, 120);
  tcase_add_test(e, cold_ga102);
  tcase_add_test(e, cold_ad102);
  tcase_add_test(e, cold_gh100);
  tcase_add_test(e, cold_gb202);
  tcase_add_test(e, usb_cold_ga102);
  tcase_add_test(e, usb_cold_gh100);
  tcase_add_test(e, usb_vbios_round_trips);
  tcase_add_test(e, bad_booter_truncated);
  tcase_add_test(e, bad_fmc_magic);
  tcase_add_test(e, bad_gsp_missing);
  tcase_add_test(e, bad_bootloader_magic);
  tcase_add_test(e, refused_fmc);
  tcase_add_test(e, refused_booter);
  tcase_add_test(e, warm_ga102);
  tcase_add_test(e, warm_gb202);
  tcase_add_test(e, unknown_chip_names_registers);
  tcase_add_test(e, fwsec_signature_by_fuse);
  tcase_add_test(e, small_bar_ad102);
  tcase_add_test(e, small_bar_gh100);
  tcase_add_test(e, plugin_gh100);
  tcase_add_test(e, plugin_ga102);
  tcase_add_test(e, plugin_usb_gb202);
  tcase_add_test(e, hcq_context_buffers_once);
  tcase_add_test(e, plugin_usb_ad102);
  tcase_add_test(e, busy_second_process);
  suite_add_tcase(s, e);
}
