/* tests/fuzz/fuzz_usb_reply.c: libFuzzer target for the ASM24 USB bridge's reply handling (usb/asm24.h,
 * usb/asm24_proto.h). A scripted transport answers every IN transfer (control or bulk) with the next bytes of the
 * input; when they run out the transfer fails as an unplugged device would. Through it the bridge is opened (LTSSM
 * check, power-on), then does config reads (completion decode, CRS and firmware-error retries), a raw TLP, memory
 * reads (aligned and not), the BAR setup (config-space sizing and resizable BAR replies) and an XDATA read. The
 * completion decoder also gets every 8 input bytes directly. The first byte says whether the open is part of it. Retries sleep 1 ms in the library: usleep is replaced
 * here by a no-op so that a reply asking for retries costs no time. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "fuzz_common.h"
#include "usb/asm24.h"
#include "usb/asm24_proto.h"
#include "usb/usb_transport.h"

int usleep(useconds_t us) {
  (void)us;
  return 0;
}

typedef struct script {
  bg_usb_transport t;
  const uint8_t *p;
  size_t n;
  bg_usb_xfer *fl[1024];   /* started, completed in start order by poll */
  size_t nfl;
} script;

static int s_start(bg_usb_transport *t, bg_usb_xfer *x) {
  script *s = (script *)t;
  if (s->nfl == sizeof(s->fl) / sizeof(s->fl[0])) return -BG_ENOMEM;
  s->fl[s->nfl++] = x;
  return 0;
}

static void s_cancel(bg_usb_transport *t, bg_usb_xfer *x) {
  (void)t;
  x->status = -BG_EIO;  /* completes failed at the next poll */
}

static void s_answer(script *s, bg_usb_xfer *x) {
  if (x->status < 0) return;  /* cancelled */
  if (x->kind == BG_USB_CTRL_OUT || x->kind == BG_USB_BULK_OUT) {
    x->actual = x->len;
    return;
  }
  size_t k = x->len < s->n ? x->len : s->n;
  if (k) memcpy(x->buf, s->p, k);
  s->p += k;
  s->n -= k;
  x->actual = k;
  if (k < x->len) x->status = -BG_ENODEV;
}

static int s_poll(bg_usb_transport *t) {
  script *s = (script *)t;
  if (!s->nfl) return 0;
  bg_usb_xfer *x = s->fl[0];
  memmove(s->fl, s->fl + 1, --s->nfl * sizeof(s->fl[0]));
  s_answer(s, x);
  t->complete(t->complete_ctx, x);
  return 0;
}

static void s_close(bg_usb_transport *t) { (void)t; }

static const bg_usb_transport_ops ops = {s_start, s_cancel, s_poll, s_close, NULL};

/* The bridge's requests after the open, answered from the script. */
static void requests(bg_asm24 *b) {
  uint32_t v = 0;
  bg_asm24_cfg_read(b, 0, 0, 0, 0, 4, &v);
  bg_asm24_cfg_read(b, 1, 0, 0, 0x12, 2, &v);
  v = 0;
  bg_asm24_tlp(b, BG_TLP_MRD32, 0x1001, 1, &v);
  uint8_t buf[40];
  bg_asm24_mem_read(b, 0x1000, buf, 16);
  bg_asm24_mem_read(b, 0x2003, buf, 9);
  bg_asm24_bar bars[6];
  bg_asm24_setup_bars(b, 4, 0x10000000, 0x200000000ull, bars);
  bg_asm24_xdata_read(b, 0xfff0, buf, 16);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (size_t at = 0; at + BG_ASM24_CPL_SIZE <= size; at += BG_ASM24_CPL_SIZE) {
    uint32_t value;
    unsigned status, ret;
    unsigned access = 1u + data[at] % 4u;
    bg_asm24_cpl_decode(data + at, data[at + 1], access, &value, &status, &ret);
    if ((access < 4 && value >> (8 * access)) || status > 7 || !bg_asm24_cpl_name(status)) abort();
  }
  if (size < 1) return 0;
  /* First byte 0: the open (LTSSM check, power-on) answered from the rest too, then the requests, then the close.
   * Else the requests only, on a bridge opened once per process (its 1 MiB queue per input would make this target
   * the slowest by far). */
  static script kept = {.t = {.ops = &ops, .name = "fuzz:1"}};
  static bg_asm24 *bridge;
  static const uint8_t link_up = BG_ASM24_LTSSM_L0;
  if (data[0] != 0) {
    if (!bridge) {
      kept.p = &link_up;
      kept.n = 1;
      if (bg_asm24_open(&kept.t, &bridge) != 0) abort();
    }
    kept.p = data + 1;
    kept.n = size - 1;
    requests(bridge);
    return 0;
  }
  script s = {.t = {.ops = &ops, .name = "fuzz:0"}, .p = data + 1, .n = size - 1};
  bg_asm24 *b;
  if (bg_asm24_open(&s.t, &b) != 0) return 0;
  requests(b);
  bg_asm24_close(b);
  return 0;
}
