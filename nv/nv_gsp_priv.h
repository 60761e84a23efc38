/* nv/nv_gsp_priv.h: what the GSP files of nv/ share (nv_gsp_msgq.c, nv_gsp_rpc.c, nv_gsp_args.c, nv_gsp_seq.c):
 * little-endian field access into shared memory and the offsets of the queue structures.
 *
 * Offsets: Linux nouveau include/nvrm/535.113.01 common/shared/msgq/inc/msgq/msgq_priv.h (msgqTxHeader,
 * msgqRxHeader), nvkm/subdev/gsp/r535.c (struct r535_gsp_msg = GSP_MSG_QUEUE_ELEMENT, struct nvfw_gsp_rpc =
 * rpc_message_header_v); tinygrad tinygrad/runtime/support/nv/ip.py NV_GSP.init_sw. */
#ifndef BG_NV_GSP_PRIV_H
#define BG_NV_GSP_PRIV_H

#include <stdint.h>
#include <string.h>

/* msgqTxHeader (32 B) and msgqRxHeader right after it (nouveau keeps them as one struct: rx at +32) */
#define BG_MSGQ_TX_VERSION 0u
#define BG_MSGQ_TX_SIZE 4u
#define BG_MSGQ_TX_MSG_SIZE 8u
#define BG_MSGQ_TX_MSG_COUNT 12u
#define BG_MSGQ_TX_WRITE_PTR 16u
#define BG_MSGQ_TX_FLAGS 20u
#define BG_MSGQ_TX_RX_HDR_OFF 24u
#define BG_MSGQ_TX_ENTRY_OFF 28u
#define BG_MSGQ_RX_READ_PTR 32u   /* msgqRxHeader.readPtr at rxHdrOff 32 */
#define BG_MSGQ_ENTRY_OFF 0x1000u /* entries start one page into each queue */

/* GSP_MSG_QUEUE_ELEMENT header (0x30 B) */
#define BG_ELEM_CHECKSUM 32u
#define BG_ELEM_SEQ 36u
#define BG_ELEM_COUNT 40u
#define BG_ELEM_PAD 44u
/* rpc_message_header_v (0x20 B) at +0x30 */
#define BG_RPC_VERSION 0u
#define BG_RPC_SIGNATURE 4u
#define BG_RPC_LENGTH 8u
#define BG_RPC_FUNCTION 12u
#define BG_RPC_RESULT 16u
#define BG_RPC_RESULT_PRIVATE 20u
#define BG_RPC_SEQUENCE 24u
#define BG_RPC_SPARE 28u

#define BG_RPC_HEADER_VERSION 0x03000000u
#define BG_RPC_SIGNATURE_VRPC 0x43505256u /* "VRPC" little-endian */
#define BG_RPC_RESULT_PENDING 0xffffffffu
#define BG_GSP_MAX_ELEMS (BG_NV_GSP_MAX_RECORD / BG_NV_GSP_MSG_SIZE)

static inline uint32_t bg_gsp_rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline uint64_t bg_gsp_rd64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static inline void bg_gsp_wr16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void bg_gsp_wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void bg_gsp_wr64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

#endif
