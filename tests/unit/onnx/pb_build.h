/* tests/unit/onnx/pb_build.h: a tiny protobuf writer for hand-built ONNX models (wire format: varint keys
 * (field << 3 | wire type), varints, length-delimited bytes, 32-bit floats), shared by the unit tests and the fuzz
 * seed generator. Messages nest by building the inner one in its own buffer. */
#ifndef BG_TESTS_PB_BUILD_H
#define BG_TESTS_PB_BUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct pb {
  uint8_t b[8192];
  size_t n;
} pb;

static inline void pb_varint(pb *p, uint64_t v) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    p->b[p->n++] = byte | (v ? 0x80 : 0);
  } while (v);
}
static inline void pb_key(pb *p, unsigned field, unsigned wt) { pb_varint(p, (uint64_t)field << 3 | wt); }
static inline void pb_int(pb *p, unsigned field, int64_t v) {
  pb_key(p, field, 0);
  pb_varint(p, (uint64_t)v);
}
static inline void pb_bytes(pb *p, unsigned field, const void *d, size_t n) {
  pb_key(p, field, 2);
  pb_varint(p, n);
  memcpy(p->b + p->n, d, n);
  p->n += n;
}
static inline void pb_str(pb *p, unsigned field, const char *s) { pb_bytes(p, field, s, strlen(s)); }
static inline void pb_msg(pb *p, unsigned field, const pb *m) { pb_bytes(p, field, m->b, m->n); }
static inline void pb_float(pb *p, unsigned field, float f) {
  pb_key(p, field, 5);
  memcpy(p->b + p->n, &f, 4);
  p->n += 4;
}

/* ValueInfoProto of a float tensor with a 1-D shape (n). */
static inline void pb_value_info(pb *p, unsigned field, const char *name, int elem_type, int64_t n) {
  pb dim = {0}, shape = {0}, tt = {0}, type = {0}, vi = {0};
  pb_int(&dim, 1, n);
  pb_msg(&shape, 1, &dim);
  pb_int(&tt, 1, elem_type);
  pb_msg(&tt, 2, &shape);
  pb_msg(&type, 1, &tt);
  pb_str(&vi, 1, name);
  pb_msg(&vi, 2, &type);
  pb_msg(p, field, &vi);
}

/* NodeProto: inputs/outputs NULL-terminated, attrs: AttributeProto messages already encoded (may be NULL). */
static inline void pb_node(pb *g, const char *op, const char *const *in, const char *const *out, const pb *attrs,
                           unsigned nattrs) {
  pb n = {0};
  for (; in && *in; in++) pb_str(&n, 1, *in);
  for (; out && *out; out++) pb_str(&n, 2, *out);
  pb_str(&n, 3, "n0");
  pb_str(&n, 4, op);
  for (unsigned i = 0; i < nattrs; i++) pb_msg(&n, 5, &attrs[i]);
  pb_msg(g, 1, &n);
}

/* ModelProto around a graph at the given opset. */
static inline void pb_model(pb *m, const pb *graph, int64_t opset) {
  pb os = {0};
  pb_int(m, 1, 8);
  pb_int(&os, 2, opset);
  pb_msg(m, 8, &os);
  pb_msg(m, 7, graph);
}

#endif
