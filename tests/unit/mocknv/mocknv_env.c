/* tests/unit/mocknv/mocknv_env.c: the object graph of reference order (root, device, subdevice, virtmem, class list,
 * usermode, VA space, UVM, TSG, GPFIFO area, context share, channels, engines, schedule, tokens), built with this
 * file's own parameter blocks. */
#include "mocknv_env.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* The tests' GPU VA == CPU VA window: 256 MiB reserved (never over an existing mapping) below 2^40, as semaphore
 * and QMD addresses must be. 1 GiB first: under AddressSanitizer everything from 2 GiB to 2 TiB is its shadow. */
static uint64_t reserve_window(void) {
  static uint64_t base;
  if (base) return base;
  const uint64_t hints[] = {0x40000000ull, 0x50000000ull, 0x1000000000ull, 0x3000000000ull};
  for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
    void *p = mmap((void *)(uintptr_t)hints[i], 256u << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                   -1, 0);
    if (p == (void *)(uintptr_t)hints[i]) return base = hints[i];
    if (p != MAP_FAILED) munmap(p, 256u << 20);
  }
  ck_abort_msg("no free 256 MiB window below 2^40 for the tests' GPU VAs");
  return 0;
}

void mnv_start(mnv *e, const char *cfg) {
  memset(e, 0, sizeof *e);
  setenv("MOCKGPU_NV", cfg, 1);
  bg_mock_devices d;
  char err[256];
  ck_assert_msg(mock_nv_start(&d, err, sizeof err) == 0, "start: %s", err);
  ck_assert_int_eq(d.count, 1);
  ck_assert_int_eq(mock_nv_plugin_sys(&e->sys, err, sizeof err), 0);
  e->ctl = e->sys->open(e->sys->ctx, "/dev/nvidiactl", O_RDWR);
  e->uvm = e->sys->open(e->sys->ctx, "/dev/nvidia-uvm", O_RDWR);
  e->uvm2 = e->sys->open(e->sys->ctx, "/dev/nvidia-uvm", O_RDWR);
  e->dev = e->sys->open(e->sys->ctx, "/dev/nvidia0", O_RDWR);
  ck_assert(e->ctl >= 0 && e->uvm >= 0 && e->uvm2 >= 0 && e->dev >= 0);
  bool hopper = strcmp(cfg, "hopper") == 0;
  e->compute_cls = hopper ? 0xcbc0 : 0xc9c0;
  e->copy_cls = hopper ? 0xc8b5 : 0xc7b5;
  e->gpfifo_cls = hopper ? 0xc86f : 0xc56f;
  e->usermode_cls = hopper ? 0xc661 : 0xc461;
  e->next_va = reserve_window();
}

/* NVOS21: hRoot @0, hObjectParent @4, hObjectNew @8, hClass @12, pAllocParms @16, paramsSize @24, status @28. */
uint32_t mnv_alloc(mnv *e, uint32_t parent, uint32_t *h, uint32_t cls, void *params, uint32_t size) {
  uint8_t a[32] = {0};
  p32(a, 0, e->root);
  p32(a, 4, parent);
  p32(a, 8, *h);
  p32(a, 12, cls);
  p64(a, 16, (uint64_t)(uintptr_t)params);
  p32(a, 24, size);
  ck_assert_int_eq(e->sys->ioctl(e->sys->ctx, e->ctl, NV_IOWR(0x2b, 32), a), 0);
  if (g32(a, 28) == 0) *h = g32(a, 8);
  return g32(a, 28);
}

/* NVOS54: hClient @0, hObject @4, cmd @8, params @16, paramsSize @24, status @28. */
uint32_t mnv_control(mnv *e, uint32_t obj, uint32_t cmd, void *params, uint32_t size) {
  uint8_t a[32] = {0};
  p32(a, 0, e->root);
  p32(a, 4, obj);
  p32(a, 8, cmd);
  p64(a, 16, (uint64_t)(uintptr_t)params);
  p32(a, 24, size);
  ck_assert_int_eq(e->sys->ioctl(e->sys->ctx, e->ctl, NV_IOWR(0x2a, 32), a), 0);
  return g32(a, 28);
}

uint32_t mnv_free(mnv *e, uint32_t parent, uint32_t obj) {
  uint8_t a[16] = {0};
  p32(a, 0, e->root);
  p32(a, 4, parent);
  p32(a, 8, obj);
  ck_assert_int_eq(e->sys->ioctl(e->sys->ctx, e->ctl, NV_IOWR(0x29, 16), a), 0);
  return g32(a, 12);
}

uint32_t mnv_uvm(mnv *e, int fd, unsigned long nr, void *p, size_t status_off) {
  ck_assert_int_eq(e->sys->ioctl(e->sys->ctx, fd, nr, p), 0);
  return g32(p, status_off);
}

static uint32_t H = 0xa0000001u; /* client-chosen handles, as nv/nv_rm.h does */
static uint32_t newh(void) { return H++; }

#define OKST(x) ck_assert_msg((x) == 0, "%s -> status 0x%x", #x, (x))

void mnv_graph_base(mnv *e) {
  uint32_t h = 0;
  OKST(mnv_alloc(e, 0, &h, 0x41, NULL, 0));
  e->root = h;
  uint8_t ver[1032] = {0};
  OKST(mnv_control(e, e->root, 0x13e, ver, sizeof ver));
  ck_assert_str_eq((char *)ver, "580.65.06");
  uint8_t init[16] = {0};
  OKST(mnv_uvm(e, e->uvm, 0x30000001, init, 8));
  uint8_t mm[8] = {0};
  p32(mm, 0, (uint32_t)e->uvm);
  OKST(mnv_uvm(e, e->uvm2, 75, mm, 4));
  uint8_t cards[72 * 64];
  ck_assert_int_eq(e->sys->ioctl(e->sys->ctx, e->ctl, NV_IOWR(200, sizeof cards), cards), 0);
  ck_assert_int_eq(cards[0], 1);
  ck_assert_int_eq(cards[72], 0);
  int ctl = e->ctl;
  ck_assert_int_eq(e->sys->ioctl(e->sys->ctx, e->dev, NV_IOWR(201, 4), &ctl), 0);
  uint8_t id[32] = {0};
  p32(id, 0, g32(cards, 16));
  OKST(mnv_control(e, e->root, 0x205, id, sizeof id));
  uint8_t dp[56] = {0};
  p32(dp, 0, g32(id, 8));
  p32(dp, 4, e->root);
  e->device = newh();
  OKST(mnv_alloc(e, e->root, &e->device, 0x80, dp, sizeof dp));
  uint32_t sd = 0;
  e->subdev = newh();
  OKST(mnv_alloc(e, e->device, &e->subdev, 0x2080, &sd, 4));
  uint8_t vm[24] = {0};
  p64(vm, 8, 0x1ffffffffffffull);
  e->virtmem = newh();
  OKST(mnv_alloc(e, e->device, &e->virtmem, 0x70, vm, sizeof vm));
  uint8_t cl[16] = {0};
  OKST(mnv_control(e, e->device, 0x800201, cl, sizeof cl));
  uint32_t n = g32(cl, 0), list[64] = {0};
  ck_assert_uint_le(n, 64);
  p64(cl, 8, (uint64_t)(uintptr_t)list);
  OKST(mnv_control(e, e->device, 0x800201, cl, sizeof cl));
  bool have = false;
  for (uint32_t i = 0; i < n; i++) have |= list[i] == e->compute_cls;
  ck_assert(have);
  e->usermode = newh();
  OKST(mnv_alloc(e, e->subdev, &e->usermode, e->usermode_cls, NULL, 0));
  /* CPU map of the usermode page: NV_ESC_RM_MAP_MEMORY on a fresh /dev/nvidia0 fd, then mmap of that fd. */
  int mfd = e->sys->open(e->sys->ctx, "/dev/nvidia0", O_RDWR);
  ck_assert_int_eq(e->sys->ioctl(e->sys->ctx, mfd, NV_IOWR(201, 4), &ctl), 0);
  uint8_t mp[56] = {0};
  p32(mp, 0, e->root);
  p32(mp, 4, e->device);
  p32(mp, 8, e->usermode);
  p64(mp, 24, 0x10000);
  p32(mp, 48, (uint32_t)mfd);
  ck_assert_int_eq(e->sys->ioctl(e->sys->ctx, e->ctl, NV_IOWR(0x4e, 56), mp), 0);
  OKST(g32(mp, 40));
  e->um = e->sys->mmap(e->sys->ctx, NULL, 0x10000, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
  ck_assert_ptr_ne(e->um, MAP_FAILED);
  uint8_t vs[56] = {0};
  p32(vs, 4, 0x48);
  p64(vs, 8, 0x1fffffb000000ull);
  p64(vs, 40, 0x1000);
  e->vaspace = newh();
  OKST(mnv_alloc(e, e->device, &e->vaspace, 0x90f1, vs, sizeof vs));
  uint8_t gid[268] = {0};
  p32(gid, 4, 2);
  OKST(mnv_control(e, e->subdev, 0x2080014a, gid, sizeof gid));
  ck_assert_uint_eq(g32(gid, 8), 16);
  memcpy(e->uuid, gid + 12, 16);
  uint8_t rg[40] = {0};
  memcpy(rg, e->uuid, 16);
  p32(rg, 24, (uint32_t)-1);
  OKST(mnv_uvm(e, e->uvm, 37, rg, 36));
  uint8_t rv[32] = {0};
  memcpy(rv, e->uuid, 16);
  p32(rv, 16, (uint32_t)e->ctl);
  p32(rv, 20, e->root);
  p32(rv, 24, e->vaspace);
  OKST(mnv_uvm(e, e->uvm, 25, rv, 28));
}

uint32_t mnv_vidmem(mnv *e, uint64_t size, uint64_t *va_out, uint8_t **cpu) {
  uint64_t va = e->next_va;
  e->next_va += (size + 0x1fffff) & ~0x1fffffull;
  uint8_t mp[128] = {0};
  p32(mp, 0, e->root);
  p32(mp, 8, 0x8000 | 0x4000 | 0x100 | 0x1 | 0x10000);
  p32(mp, 24, 3u << 27);
  p32(mp, 28, 1u << 2 | 1);
  p32(mp, 32, 6);
  p64(mp, 64, size);
  p64(mp, 72, 4096);
  p64(mp, 88, size - 1);
  uint32_t h = newh();
  OKST(mnv_alloc(e, e->device, &h, 0x40, mp, sizeof mp));
  uint8_t cr[24] = {0};
  p64(cr, 0, va);
  p64(cr, 8, size);
  OKST(mnv_uvm(e, e->uvm, 73, cr, 16));
  uint8_t md[64] = {0};
  p32(md, 0, e->root);
  p32(md, 4, e->device);
  p32(md, 8, e->virtmem);
  p32(md, 12, h);
  p64(md, 24, size);
  p32(md, 32, 0x8110);
  p64(md, 48, va);
  ck_assert_int_eq(e->sys->ioctl(e->sys->ctx, e->ctl, NV_IOWR(0x57, 64), md), 0);
  OKST(g32(md, 56));
  static uint8_t mx[9264];
  memset(mx, 0, sizeof mx);
  p64(mx, 0, va);
  p64(mx, 8, size);
  memcpy(mx + 24, e->uuid, 16);
  p32(mx, 24 + 16, 1);
  p64(mx, 9240, 1);
  p32(mx, 9248, (uint32_t)e->ctl);
  p32(mx, 9252, e->root);
  p32(mx, 9256, h);
  OKST(mnv_uvm(e, e->uvm, 33, mx, 9260));
  if (cpu) {
    int fd = e->sys->open(e->sys->ctx, "/dev/nvidia0", O_RDWR);
    int ctl = e->ctl;
    ck_assert_int_eq(e->sys->ioctl(e->sys->ctx, fd, NV_IOWR(201, 4), &ctl), 0);
    uint8_t mm[56] = {0};
    p32(mm, 0, e->root);
    p32(mm, 4, e->device);
    p32(mm, 8, h);
    p64(mm, 24, size);
    p32(mm, 48, (uint32_t)fd);
    ck_assert_int_eq(e->sys->ioctl(e->sys->ctx, e->ctl, NV_IOWR(0x4e, 56), mm), 0);
    OKST(g32(mm, 40));
    void *p = e->sys->mmap(e->sys->ctx, (void *)(uintptr_t)va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    ck_assert_ptr_eq(p, (void *)(uintptr_t)va);
    *cpu = p;
  }
  if (va_out) *va_out = va;
  return h;
}

enum { ENTRIES = 0x400 };

void mnv_graph_full(mnv *e) {
  mnv_graph_base(e);
  uint8_t tp[20] = {0};
  p32(tp, 12, 1);
  e->tsg = newh();
  OKST(mnv_alloc(e, e->device, &e->tsg, 0xa06c, tp, sizeof tp));
  e->area = mnv_vidmem(e, 0x200000, &e->area_va, &e->area_cpu);
  e->cmdq = mnv_vidmem(e, 0x200000, &e->cmdq_va, &e->cmdq_cpu);
  e->sigmem = mnv_vidmem(e, 0x10000, &e->sig_va, &e->sig_cpu);
  e->notif = mnv_vidmem(e, 0x1000, &e->notif_va, &e->notif_cpu);
  uint8_t cs[12] = {0};
  p32(cs, 0, e->vaspace);
  p32(cs, 4, 1);
  e->ctxshare = newh();
  OKST(mnv_alloc(e, e->tsg, &e->ctxshare, 0x9067, cs, sizeof cs));
  for (int i = 0; i < 2; i++) {
    uint64_t off = i ? 0x100000 : 0;
    uint8_t cp[368] = {0};
    p32(cp, 0, e->notif);
    p32(cp, 4, e->area);
    p64(cp, 8, e->area_va + off);
    p32(cp, 16, ENTRIES);
    p32(cp, 24, e->ctxshare);
    p32(cp, 32, e->area);
    p64(cp, 64, off + ENTRIES * 8);
    e->ch[i] = newh();
    OKST(mnv_alloc(e, e->tsg, &e->ch[i], e->gpfifo_cls, cp, sizeof cp));
    e->eng[i] = newh();
    OKST(mnv_alloc(e, e->ch[i], &e->eng[i], i ? e->copy_cls : e->compute_cls, NULL, 0));
    uint32_t tok = 0xffffffffu;
    OKST(mnv_control(e, e->ch[i], 0xc36f0108, &tok, 4));
    e->token[i] = tok;
    uint8_t rc[56] = {0};
    memcpy(rc, e->uuid, 16);
    p32(rc, 16, (uint32_t)e->ctl);
    p32(rc, 20, e->root);
    p32(rc, 24, e->ch[i]);
    p64(rc, 32, 0x1800000000ull + 0x4000000ull * (uint64_t)i);
    p64(rc, 40, 0x4000000);
    OKST(mnv_uvm(e, e->uvm, 27, rc, 48));
  }
  uint8_t db[12] = {0};
  p32(db, 4, e->root);
  p32(db, 8, e->eng[0]);
  e->debugger = newh();
  OKST(mnv_alloc(e, e->device, &e->debugger, 0x83de, db, sizeof db));
  uint8_t sch[3] = {1, 0, 0};
  OKST(mnv_control(e, e->tsg, 0xa06c0101, sch, 3));
}

void mnv_submit(mnv *e, int ch, const uint32_t *dw, uint32_t n) {
  uint32_t at = e->cmdq_put;
  memcpy(e->cmdq_cpu + at, dw, 4u * n);
  e->cmdq_put = (at + 4 * n + 15) & ~15u;
  uint64_t va = e->cmdq_va + at;
  uint8_t *ring = e->area_cpu + (ch ? 0x100000 : 0);
  uint8_t *userd = ring + ENTRIES * 8;
  uint32_t put = e->gpput[ch];
  p64(ring, 8 * put, (va & ~3ull) | 1ull << 41 | (uint64_t)n << 42);
  e->gpput[ch] = (put + 1) % ENTRIES;
  __atomic_store_n((uint32_t *)(userd + 0x8c), e->gpput[ch], __ATOMIC_SEQ_CST);
  e->sys->doorbell(e->sys->ctx, (volatile uint32_t *)(e->um + 0x90), e->token[ch]);
}

int mnv_wait64(const volatile uint8_t *p, uint64_t v) {
  for (int i = 0; i < 200000; i++) {
    if (__atomic_load_n((const uint64_t *)p, __ATOMIC_SEQ_CST) >= v) return 0;
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  return -1;
}

unsigned mnv_drain(mnv *e, int ch) {
  uint8_t *userd = e->area_cpu + (ch ? 0x100000 : 0) + ENTRIES * 8;
  for (int i = 0; i < 200000; i++) {
    if (mock_nv_failures(NULL, 0)) return mock_nv_failures(NULL, 0);
    if (__atomic_load_n((uint32_t *)(userd + 0x88), __ATOMIC_SEQ_CST) == e->gpput[ch]) return 0;
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  return mock_nv_failures(NULL, 0);
}
