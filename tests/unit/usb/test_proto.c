/* tests/unit/usb/test_proto.c: the ASM24 protocol encoders (usb/asm24_proto.h) against the reference's
 * tables (tinygrad tinygrad/runtime/support/usb.py ASM24Controller), and the transport's bookkeeping. */
#include "usb/asm24_proto.h"
#include "usb/usb_progress.h"
#include "usb/usb_scan.h"
#include "usb_test.h"

static uint32_t u32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

START_TEST(tlp_types) {
  /* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: posted = memory writes and messages */
  ck_assert(bg_asm24_tlp_posted(BG_TLP_MWR64) && bg_asm24_tlp_posted(BG_TLP_MWR32));
  ck_assert(bg_asm24_tlp_posted(0x30) && bg_asm24_tlp_posted(0x74));
  ck_assert(!bg_asm24_tlp_posted(BG_TLP_MRD64) && !bg_asm24_tlp_posted(BG_TLP_CFGWR0) &&
            !bg_asm24_tlp_posted(BG_TLP_CFGWR1) && !bg_asm24_tlp_posted(BG_TLP_CFGRD1));
  ck_assert(bg_asm24_tlp_is_cfg(0x04) && bg_asm24_tlp_is_cfg(0x05) && bg_asm24_tlp_is_cfg(0x44) &&
            bg_asm24_tlp_is_cfg(0x45) && !bg_asm24_tlp_is_cfg(0x20) && !bg_asm24_tlp_is_cfg(0x60));
  ck_assert_uint_eq(bg_asm24_cfg_fmt(false, 0), 0x04);
  ck_assert_uint_eq(bg_asm24_cfg_fmt(true, 0), 0x44);
  ck_assert_uint_eq(bg_asm24_cfg_fmt(false, 4), 0x05);
  ck_assert_uint_eq(bg_asm24_cfg_fmt(true, 1), 0x45);
  ck_assert_str_eq(bg_asm24_fmt_name(0x45), "CfgWr1");
  ck_assert_str_eq(bg_asm24_cpl_name(BG_CPL_UR), "Unsupported Request");
}
END_TEST

START_TEST(cfg_address) {
  uint64_t a;
  OK(bg_asm24_cfg_addr(4, 0, 0, 0x10, &a));
  ck_assert_uint_eq(a, 0x04000010ull);
  OK(bg_asm24_cfg_addr(255, 31, 7, 0xFFF, &a));
  ck_assert_uint_eq(a, 255ull << 24 | 31ull << 19 | 7ull << 16 | 0xFFF);
  ck_assert_int_eq(bg_asm24_cfg_addr(256, 0, 0, 0, &a), -BG_EINVAL);
  ck_assert_int_eq(bg_asm24_cfg_addr(0, 32, 0, 0, &a), -BG_EINVAL);
  ck_assert_int_eq(bg_asm24_cfg_addr(0, 0, 8, 0, &a), -BG_EINVAL);
  ck_assert_int_eq(bg_asm24_cfg_addr(0, 0, 0, 0x1000, &a), -BG_EINVAL);
}
END_TEST

START_TEST(tlp_encode) {
  uint8_t p[12];
  uint16_t wv;
  /* a 1-byte config write at byte 2 of a dword: byte_en 0b0100, value in lane 2 */
  OK(bg_asm24_tlp_encode(0x45, 0x04000006ull, 1, 0xAB, &wv, p));
  ck_assert_uint_eq(wv, 0x45 | 0x4 << 8);
  ck_assert_uint_eq(u32(p), 0x04000004u);
  ck_assert_uint_eq(u32(p + 4), 0);
  ck_assert_uint_eq(u32(p + 8), 0xAB0000u);
  /* 2 bytes at lane 1, 64-bit address; extra value bits are masked off */
  OK(bg_asm24_tlp_encode(0x60, 0x812345671ull, 2, 0xFFFF1234u, &wv, p));
  ck_assert_uint_eq(wv, 0x60 | 0x6 << 8);
  ck_assert_uint_eq(u32(p), 0x12345670u);
  ck_assert_uint_eq(u32(p + 4), 0x8);
  ck_assert_uint_eq(u32(p + 8), 0x123400u);
  OK(bg_asm24_tlp_encode(0x20, 0x1000, 4, 0, &wv, p));
  ck_assert_uint_eq(wv, 0x20 | 0xF << 8);
  /* crossing a dword is refused */
  ck_assert_int_eq(bg_asm24_tlp_encode(0x60, 0x1003, 2, 0, &wv, p), -BG_EINVAL);
  ck_assert_int_eq(bg_asm24_tlp_encode(0x60, 0x1000, 5, 0, &wv, p), -BG_EINVAL);
  ck_assert_int_eq(bg_asm24_tlp_encode(0x60, 0x1000, 0, 0, &wv, p), -BG_EINVAL);
  /* streaming: fmt 0x60/0x20, byte_en 0xF, value = dword count */
  bg_asm24_stream_encode(true, 0x800000010ull, 3, &wv, p);
  ck_assert_uint_eq(wv, 0x0F60);
  ck_assert_uint_eq(u32(p), 0x10);
  ck_assert_uint_eq(u32(p + 4), 8);
  ck_assert_uint_eq(u32(p + 8), 3);
  bg_asm24_stream_encode(false, 0x10000000ull, 1, &wv, p);
  ck_assert_uint_eq(wv, 0x0F20);
}
END_TEST

START_TEST(cpl_decode) {
  uint8_t c[8] = {0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0};
  uint32_t v;
  unsigned st, ret;
  bg_asm24_cpl_decode(c, 0x1002, 2, &v, &st, &ret);
  ck_assert_uint_eq(v, 0x4433);
  ck_assert_uint_eq(st, BG_CPL_SC);
  ck_assert_uint_eq(ret, 0);
  bg_asm24_cpl_decode(c, 0x1001, 1, &v, &st, &ret);
  ck_assert_uint_eq(v, 0x22);
  bg_asm24_cpl_decode(c, 0x1000, 4, &v, &st, &ret);
  ck_assert_uint_eq(v, 0x44332211u);
  c[4] = 1 << 5; /* UR */
  c[7] = 3;
  bg_asm24_cpl_decode(c, 0x1000, 4, &v, &st, &ret);
  ck_assert_uint_eq(st, BG_CPL_UR);
  ck_assert_uint_eq(ret, 3);
  c[4] = 4 << 5;
  bg_asm24_cpl_decode(c, 0x1000, 4, &v, &st, &ret);
  ck_assert_uint_eq(st, BG_CPL_CA);
}
END_TEST

START_TEST(sram_args) {
  uint16_t wv, wi;
  size_t wire;
  /* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: wValue = sectors, wIndex = slot | ceil(padded/16K) << 8 */
  OK(bg_asm24_sram_write_args(1000, 16, &wv, &wi, &wire));
  ck_assert_uint_eq(wire, 1024);
  ck_assert_uint_eq(wv, 2);
  ck_assert_uint_eq(wi, 16 | 1 << 8);
  OK(bg_asm24_sram_write_args(0x40000, 0, &wv, &wi, &wire));
  ck_assert_uint_eq(wv, 0x200);
  ck_assert_uint_eq(wi, 16 << 8);
  ck_assert_int_eq(bg_asm24_sram_write_args(0x40000, 17, &wv, &wi, &wire), -BG_EINVAL);
  ck_assert_int_eq(bg_asm24_sram_write_args(0, 0, &wv, &wi, &wire), -BG_EINVAL);
  /* read arm: bit 15 set, slot 0 */
  OK(bg_asm24_sram_read_args(0x80000, &wv, &wi, &wire));
  ck_assert_uint_eq(wv, 0x8000 | 0x400);
  ck_assert_uint_eq(wi, 32 << 8);
  ck_assert_uint_eq(wire, 0x80000);
  OK(bg_asm24_sram_read_args(1, &wv, &wi, &wire));
  ck_assert_uint_eq(wv, 0x8001);
  ck_assert_uint_eq(wi, 1 << 8);
  ck_assert_uint_eq(wire, 512);
  ck_assert_int_eq(bg_asm24_sram_read_args(0x80001, &wv, &wi, &wire), -BG_EINVAL);
}
END_TEST

START_TEST(windows_and_ids) {
  /* tinygrad tinygrad/runtime/support/usb.py ASM24Controller */
  ck_assert_uint_eq(bg_asm24_windows[BG_ASM24_WIN_SRAM].xdata, 0xF000);
  ck_assert_uint_eq(bg_asm24_windows[BG_ASM24_WIN_SRAM].sys, 0x200000);
  ck_assert_uint_eq(bg_asm24_windows[BG_ASM24_WIN_SYSBUF].sys, 0x820000);
  ck_assert_uint_eq(bg_asm24_windows[BG_ASM24_WIN_CQBUF].sys, 0x822000);
  ck_assert_uint_eq(bg_asm24_windows[BG_ASM24_WIN_CQBUF].xdata, 0xB800);
  /* tinygrad tinygrad/runtime/ops_amd.py USBIface: rings sized for USB */
  ck_assert_uint_eq(bg_asm24_usb_sizes.compute_ring, 0x2000);
  ck_assert_uint_eq(bg_asm24_usb_sizes.kernargs, 0x2000);
  ck_assert_uint_eq(bg_asm24_usb_sizes.signal_page, 0x100);
  ck_assert_uint_eq(bg_asm24_usb_sizes.sdma_ring, 0x100000);
  ck_assert_uint_eq(bg_asm24_usb_sizes.pm4_ibs, 0x2000);
  /* tinygrad tinygrad/runtime/support/usb.py ASM24Controller */
  const bg_usb_bridge_id *id = bg_usb_bridge_lookup(0xADD1, 0x0001);
  ck_assert(id && id->custom_fw);
  id = bg_usb_bridge_lookup(0x174C, 0x2464);
  ck_assert(id && !id->custom_fw);
}
END_TEST

START_TEST(progress_line) {
  bg_usb_progress p;
  bg_usb_progress_init(&p, "copy in");
  char line[160];
  bg_usb_progress_format(&p, 50, 100, 1e-5, line, sizeof(line));
  ck_assert_msg(strstr(line, "copy in [###############...............]  50.0%") != NULL, "%s", line);
  ck_assert(strstr(line, "5.0 MB/s") != NULL);
  bg_usb_progress_format(&p, 100, 100, 0, line, sizeof(line));
  ck_assert(strstr(line, "100.0%") != NULL);
}
END_TEST

/* The libusb transport on a machine without a bridge: a clean error, never a crash. */
START_TEST(libusb_no_bridge) {
  bg_usb_transport *t = NULL;
  int r = bg_usb_open_libusb(0, &t);
  ck_assert_int_lt(r, 0);
  ck_assert_ptr_null(t);
  const char *msg = bg_last_error();
  ck_assert_msg(strstr(msg, "usb") != NULL, "%s", msg);
  printf("libusb open without a bridge: %s\n", msg);
}
END_TEST

Suite *usb_proto_suite(void) {
  Suite *s = suite_create("usb-proto");
  TCase *tc = tcase_create("proto");
  tcase_add_test(tc, tlp_types);
  tcase_add_test(tc, cfg_address);
  tcase_add_test(tc, tlp_encode);
  tcase_add_test(tc, cpl_decode);
  tcase_add_test(tc, sram_args);
  tcase_add_test(tc, windows_and_ids);
  tcase_add_test(tc, progress_line);
  tcase_add_test(tc, libusb_no_bridge);
  suite_add_tcase(s, tc);
  return s;
}
