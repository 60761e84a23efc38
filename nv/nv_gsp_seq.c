/* nv/nv_gsp_seq.c: the CPU sequencer GSP-RM sends during boot (GSP_RUN_CPU_SEQUENCER): a list of register writes,
 * read-modify-writes, polls, delays, register saves and GSP core operations the host performs for it.
 *
 * Facts: Linux nouveau include/nvrm/535.113.01/nvidia/arch/nvalloc/common/inc/rmgspseq.h (opcodes, payload structs:
 * REG_MODIFY is {addr, mask, val}, REG_POLL {addr, mask, val, timeout (us), error}, REG_STORE {addr, index}),
 * nvidia/generated/g_rpc-structures.h (rpc_run_cpu_sequencer_v17_00: bufferSizeDWord, cmdIndex, regSaveArea[8],
 * commandBuffer[]; open-gpu-kernel-modules rmgspseq.h has the same order; tinygrad's run_cpu_seq reads REG_MODIFY as
 * {addr, val, mask}, swapped) and nvkm/subdev/gsp/r535.c r535_gsp_msg_run_cpu_sequencer (walk by 1 + payload dwords while below
 * cmdIndex; a POLL with timeout 0 uses the default). Here every command is bounds-checked before it is read, and a
 * POLL waits at most ops->timeout_ms whatever its own timeout says. */

#include "baregpu/error.h"
#include "nv/nv_gsp.h"
#include "nv/nv_gsp_priv.h"

enum {
  SEQ_BUFFER_SIZE = 0, /* bufferSizeDWord */
  SEQ_CMD_INDEX = 4,   /* dwords of commands */
  SEQ_SAVE_AREA = 8,   /* regSaveArea[8] */
  SEQ_COMMANDS = 40,
  SEQ_SAVE_SLOTS = 8,
};

enum {
  OP_WRITE, OP_MODIFY, OP_POLL, OP_DELAY_US, OP_SAVE, OP_CORE_RESET, OP_CORE_START, OP_CORE_WAIT_HALT, OP_CORE_RESUME,
};

static const char *op_name(uint32_t op) {
  static const char *names[] = {"REG_WRITE", "REG_MODIFY", "REG_POLL", "DELAY_US", "REG_STORE",
                                "CORE_RESET", "CORE_START", "CORE_WAIT_FOR_HALT", "CORE_RESUME"};
  return op < sizeof names / sizeof names[0] ? names[op] : "unknown";
}

/* Payload dwords after the opcode (GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS); -1 for an unknown opcode. */
static int op_dwords(uint32_t op) {
  switch (op) {
  case OP_WRITE: return 2;
  case OP_MODIFY: return 3;
  case OP_POLL: return 5;
  case OP_DELAY_US: return 1;
  case OP_SAVE: return 2;
  case OP_CORE_RESET: case OP_CORE_START: case OP_CORE_WAIT_HALT: case OP_CORE_RESUME: return 0;
  default: return -1;
  }
}

/* Poll step: 10 us first (a register that is nearly ready), doubling up to 1 ms so that a long timeout costs few
 * wake-ups. */
#define POLL_STEP_US 10u
#define POLL_STEP_MAX_US 1000u

static int core_op(int (*fn)(void *), void *ctx, uint32_t at, uint32_t op) {
  if (!fn) return bg_error(BG_EINVAL, "GSP sequencer command %u (%s): no handler for this opcode", at, op_name(op));
  int r = fn(ctx);
  return r < 0 ? bg_error_context(r, "GSP sequencer command %u (%s): ", at, op_name(op)) : 0;
}

int bg_nv_gsp_sequencer_run(const uint8_t *payload, size_t n, const bg_nv_seq_ops *ops) {
  if (!ops || !ops->rd32 || !ops->wr32 || !ops->delay_us)
    return bg_error(BG_EINVAL, "GSP sequencer: register ops (rd32, wr32, delay_us) missing");
  if (!payload || n < SEQ_COMMANDS)
    return bg_error(BG_EINVAL, "GSP sequencer: payload of %zu bytes, the header alone is %d", payload ? n : 0,
                    SEQ_COMMANDS);
  uint32_t ndw = bg_gsp_rd32(payload + SEQ_CMD_INDEX);
  size_t have = (n - SEQ_COMMANDS) / 4;
  if (ndw > have)
    return bg_error(BG_EINVAL, "GSP sequencer: cmdIndex %u dwords, but the payload holds %zu (bufferSizeDWord %u)", ndw,
                    have, bg_gsp_rd32(payload + SEQ_BUFFER_SIZE));
  const uint8_t *cmd = payload + SEQ_COMMANDS;
  uint32_t save[SEQ_SAVE_SLOTS];
  for (int i = 0; i < SEQ_SAVE_SLOTS; i++) save[i] = bg_gsp_rd32(payload + SEQ_SAVE_AREA + 4 * i);
  uint64_t default_us = ops->timeout_ms > 0 ? (uint64_t)ops->timeout_ms * 1000u : 4000000u; /* nouveau's 4 s */
  for (uint32_t at = 0; at < ndw;) {
    uint32_t op = bg_gsp_rd32(cmd + 4 * (size_t)at);
    int len = op_dwords(op);
    if (len < 0) return bg_error(BG_EINVAL, "GSP sequencer command at dword %u: unknown opcode %u", at, op);
    if ((uint64_t)at + 1 + (uint64_t)len > ndw)
      return bg_error(BG_EINVAL, "GSP sequencer command at dword %u (%s): needs %d dwords, runs past cmdIndex %u", at,
                      op_name(op), 1 + len, ndw);
    const uint8_t *a = cmd + 4 * ((size_t)at + 1);
    uint32_t addr = len ? bg_gsp_rd32(a) : 0;
    switch (op) {
    case OP_WRITE: ops->wr32(ops->ctx, addr, bg_gsp_rd32(a + 4)); break;
    case OP_MODIFY: {
      uint32_t mask = bg_gsp_rd32(a + 4), val = bg_gsp_rd32(a + 8);
      ops->wr32(ops->ctx, addr, (ops->rd32(ops->ctx, addr) & ~mask) | (val & mask));
      break;
    }
    case OP_POLL: {
      uint32_t mask = bg_gsp_rd32(a + 4), val = bg_gsp_rd32(a + 8), tmo = bg_gsp_rd32(a + 12);
      /* GSP's own timeout, but never longer than the driver's wait (a u32 of microseconds is up to 71 minutes) */
      uint64_t limit = tmo && tmo < default_us ? tmo : default_us, waited = 0, step = POLL_STEP_US;
      /* Time is counted in the delays asked for, so a fake clock (tests, the emulator) gives the same result. */
      for (;;) {
        uint32_t r = ops->rd32(ops->ctx, addr);
        if ((r & mask) == val) break;
        if (waited >= limit)
          return bg_error(BG_ETIMEDOUT, "GSP sequencer command at dword %u (REG_POLL 0x%06x): (0x%08x & 0x%08x) != "
                          "0x%08x after %llu us (error code 0x%x)", at, addr, r, mask, val, (unsigned long long)limit,
                          bg_gsp_rd32(a + 16));
        uint64_t d = limit - waited < step ? limit - waited : step;
        ops->delay_us(ops->ctx, (uint32_t)d);
        waited += d;
        if (step < POLL_STEP_MAX_US) step *= 2;
      }
      break;
    }
    case OP_DELAY_US: ops->delay_us(ops->ctx, addr); break;
    case OP_SAVE: {
      uint32_t idx = bg_gsp_rd32(a + 4);
      if (idx >= SEQ_SAVE_SLOTS)
        return bg_error(BG_EINVAL, "GSP sequencer command at dword %u (REG_STORE 0x%06x): index %u, regSaveArea has %d",
                        at, addr, idx, SEQ_SAVE_SLOTS);
      save[idx] = ops->rd32(ops->ctx, addr);
      BG_LOG(3, "GSP sequencer: save 0x%06x -> [%u] = 0x%08x", addr, idx, save[idx]);
      break;
    }
    case OP_CORE_RESET: {
      int r = core_op(ops->core_reset, ops->ctx, at, op);
      if (r < 0) return r;
      break;
    }
    case OP_CORE_START: {
      int r = core_op(ops->core_start, ops->ctx, at, op);
      if (r < 0) return r;
      break;
    }
    case OP_CORE_WAIT_HALT: {
      int r = core_op(ops->core_wait_halt, ops->ctx, at, op);
      if (r < 0) return r;
      break;
    }
    default: { /* OP_CORE_RESUME: op_dwords accepted nothing else */
      int r = core_op(ops->core_resume, ops->ctx, at, op);
      if (r < 0) return r;
      break;
    }
    }
    at += 1 + (uint32_t)len;
  }
  return 0;
}
