/* nv/nv_sys.h: the lowest access layer of the NVK interface: how nv/ reaches the nvidia kernel module.
 *
 * NVK+NV uses the system's calls (bg_nv_sys_real, nv_sys.c). MOCKNVK+NV gets a table from the emulated-GPU module
 * (platform/mock_plugin.h, bg_mock_plugin_nv_sys): the same driver code then talks to an emulated RM/UVM, exactly as
 * MOCKPCI+AMD swaps only the sysfs/BAR hooks. Everything above this table is the same for both.
 *
 * Memory model (both): GPU VA == CPU VA. Device memory is an RM object; its CPU view is mmap(va, MAP_SHARED|MAP_FIXED)
 * of the fd that NV_ESC_RM_MAP_MEMORY was given; host memory is an anonymous mapping described to RM with
 * NV01_MEMORY_SYSTEM_OS_DESCRIPTOR; GPU mappings are UVM external ranges. */
#ifndef BG_NV_SYS_H
#define BG_NV_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct bg_nv_sys {
  void *ctx;
  /* open(2) of "/dev/nvidiactl", "/dev/nvidia<minor>", "/dev/nvidia-uvm": fd, or -1 with errno. */
  int (*open)(void *ctx, const char *path, int flags);
  int (*close)(void *ctx, int fd);
  /* ioctl(2): 0, or -1 with errno (RM's own status travels in the parameter block). */
  int (*ioctl)(void *ctx, int fd, unsigned long request, void *arg);
  /* mmap(2)/munmap(2): the address, or MAP_FAILED with errno. fd -1 with MAP_ANONYMOUS for host memory. */
  void *(*mmap)(void *ctx, void *addr, size_t len, int prot, int flags, int fd, off_t off);
  int (*munmap)(void *ctx, void *addr, size_t len);
  /* Read a text file (/proc/driver/nvidia/version) into buf (NUL-terminated): bytes read, or -1 with errno. */
  long (*read_file)(void *ctx, const char *path, char *buf, size_t cap);
  /* Ring a doorbell: store token at reg (the usermode page + NVC361_NOTIFY_CHANNEL_PENDING 0x90) after the GPFIFO
   * entry and GPPut are visible (the caller fenced). Real: a volatile 32-bit store. Emulated: the model's engine
   * wakes (a C program cannot trap a plain store, as tinygrad's Python mock does). */
  void (*doorbell)(void *ctx, volatile uint32_t *reg, uint32_t token);
} bg_nv_sys;

/* The system calls, /proc and a plain store. */
extern const bg_nv_sys bg_nv_sys_real;

#endif
