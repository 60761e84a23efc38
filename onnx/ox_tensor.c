/* onnx/ox_tensor.c: TensorProto -> tensor. Elements come from raw_data (little-endian, fixed width) or from the
 * typed repeated field the ONNX spec assigns to each data type (onnx.proto, TensorProto: int32_data carries int8,
 * uint8, int16, uint16, bool, float16 and bfloat16 too; uint64_data carries uint32). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ox.h"

static const char *const dtype_names[] = {
    "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL", "FLOAT16",
    "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
    "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4"};

const char *ox_dtype_name(int t) {
  return t >= 0 && (size_t)t < sizeof dtype_names / sizeof *dtype_names ? dtype_names[t] : "an unknown data type";
}

int ox_dtype(int t, enum bg_dtype *out, const char **why) {
  static const int map[17] = {-1, BG_FLOAT32, BG_UINT8, BG_INT8, BG_UINT16, BG_INT16, BG_INT32, BG_INT64, -1,
                              BG_BOOL, BG_FLOAT16, BG_FLOAT64, BG_UINT32, BG_UINT64, -1, -1, BG_BFLOAT16};
  if (t < 0 || t >= 17 || map[t] < 0) {
    if (why) *why = t == 8 ? "a string tensor" : t == 14 || t == 15 ? "a complex tensor" : t == 0 ? "of UNDEFINED type"
                                                                                               : "a float8/int4 tensor";
    return -BG_ENOTSUP;
  }
  if (!bg_dtype_size((enum bg_dtype)map[t])) {   /* float64/bfloat16 before the dtype work lands */
    if (why) *why = "a dtype this library does not build yet";
    return -BG_ENOTSUP;
  }
  *out = (enum bg_dtype)map[t];
  return 0;
}

bool ox_is_float(enum bg_dtype t) {
  return t == BG_FLOAT16 || t == BG_FLOAT32 || t == BG_FLOAT64 || t == BG_BFLOAT16;
}

static bool is_int(enum bg_dtype t) { return !ox_is_float(t) && t != BG_BOOL; }

/* Element i of a little-endian buffer of dtype t as int64 (integer dtypes and bool only). */
static int64_t elem_int(const uint8_t *p, enum bg_dtype t, size_t i) {
  switch (t) {
  case BG_BOOL: case BG_UINT8: return p[i];
  case BG_INT8: return (int8_t)p[i];
  case BG_INT16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
  case BG_UINT16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
  case BG_INT32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
  case BG_UINT32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
  default: { int64_t v; memcpy(&v, p + 8 * i, 8); return v; }
  }
}

/* data_location EXTERNAL: external_data's "location" (relative to the model's folder, no "..", no absolute path),
 * "offset" and "length" (decimal strings, onnx.proto's TensorProto.external_data), read by the file loader. */
static int external(bg_onnx_model *m, bg_tctx *c, const Onnx__TensorProto *tp, const char *where, enum bg_dtype dt,
                    const int64_t *shape, size_t bytes, bg_tensor **out) {
  const char *loc = NULL;
  uint64_t off = 0, len = bytes;
  for (size_t i = 0; i < tp->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = tp->external_data[i];
    const char *k = e->key ? e->key : "", *v = e->value ? e->value : "";
    char *end = NULL;
    if (!strcmp(k, "location")) {
      loc = v;
    } else if (!strcmp(k, "offset") || !strcmp(k, "length")) {
      unsigned long long x = strtoull(v, &end, 10);
      if (!v[0] || *end || v[0] == '-')
        return ox_model_err(m, BG_EFORMAT, "%s: external_data '%s' is '%s', expected a decimal integer", where, k, v);
      if (k[0] == 'o') off = x;
      else len = x;
    }
  }
  if (!loc || !loc[0]) return ox_model_err(m, BG_EFORMAT, "%s: data_location EXTERNAL without external_data "
                                           "'location'", where);
  if (loc[0] == '/' || strstr(loc, ".."))
    return ox_model_err(m, BG_EFORMAT, "%s: external_data location '%s' leaves the model's folder", where, loc);
  if (len != bytes)
    return ox_model_err(m, BG_EFORMAT, "%s: external_data length %llu, expected %zu for its dims", where,
                        (unsigned long long)len, bytes);
  if (!m->base_dir) return ox_model_err(m, BG_EINVAL, "%s: external data '%s' of a model loaded from memory without "
                                        "a folder", where, loc);
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/%s", m->base_dir, loc) >= sizeof path)
    return ox_model_err(m, BG_EINVAL, "%s: external data path too long", where);
  *out = bg_tn_from_file(c, path, off, dt, (unsigned)tp->n_dims, shape);
  if (!*out || bg_tctx_error(c))
    return ox_model_err(m, BG_EINVAL, "%s: external data: %s", where,
                        bg_tctx_error(c) ? bg_tctx_error(c) : bg_last_error());
  return 0;
}

int ox_tensor_from_proto(bg_onnx_model *m, bg_tctx *c, const Onnx__TensorProto *tp, const char *where,
                         bg_tensor **out, ox_val *v) {
  *out = NULL;
  enum bg_dtype dt;
  const char *why = NULL;
  int dtype = tp->has_data_type ? tp->data_type : 0;
  if (ox_dtype(dtype, &dt, &why) < 0) return ox_model_err(m, BG_ENOTSUP, "%s: TensorProto.data_type %d (%s) is %s",
                                                           where, dtype, ox_dtype_name(dtype), why);
  if (tp->segment) return ox_model_err(m, BG_ENOTSUP, "%s: TensorProto.segment (a tensor split in segments)", where);
  if (tp->n_dims > BG_MAX_DIMS)
    return ox_model_err(m, BG_ENOTSUP, "%s: %zu dimensions (at most %d)", where, tp->n_dims, BG_MAX_DIMS);
  int64_t shape[BG_MAX_DIMS];
  uint64_t numel = 1;
  for (size_t d = 0; d < tp->n_dims; d++) {
    shape[d] = tp->dims[d];
    if (tp->dims[d] < 0 || tp->dims[d] > (1ll << 40))
      return ox_model_err(m, BG_EFORMAT, "%s: TensorProto.dims[%zu] = %lld is out of range", where, d,
                          (long long)tp->dims[d]);
    numel *= (uint64_t)tp->dims[d];
    if (numel > (1ull << 40)) return ox_model_err(m, BG_EFORMAT, "%s: TensorProto.dims give too many elements", where);
  }
  unsigned es = bg_dtype_size(dt);
  size_t bytes = (size_t)numel * es;
  if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return external(m, c, tp, where, dt, shape, bytes, out);
  /* the element count of the field in use, checked before anything is allocated */
  size_t have;
  const char *field;
  if (tp->has_raw_data) {
    field = "raw_data";
    if (tp->raw_data.len != bytes)
      return ox_model_err(m, BG_EFORMAT, "%s: TensorProto.raw_data has %zu bytes, expected %zu (%llu elements of %s)",
                          where, tp->raw_data.len, bytes, (unsigned long long)numel, bg_dtype_name(dt));
    have = (size_t)numel;
  } else if (dt == BG_FLOAT32) {
    field = "float_data";
    have = tp->n_float_data;
  } else if (dt == BG_FLOAT64) {
    field = "double_data";
    have = tp->n_double_data;
  } else if (dt == BG_INT64) {
    field = "int64_data";
    have = tp->n_int64_data;
  } else if (dt == BG_UINT32 || dt == BG_UINT64) {
    field = "uint64_data";
    have = tp->n_uint64_data;
  } else {   /* int32_data: int32, int16, int8, uint16, uint8, bool, float16, bfloat16 (bit patterns) */
    field = "int32_data";
    have = tp->n_int32_data;
  }
  if (have != numel)
    return ox_model_err(m, BG_EFORMAT, "%s: TensorProto.%s has %zu elements, expected %llu for dims of %s", where,
                        field, have, (unsigned long long)numel, bg_dtype_name(dt));
  uint8_t *buf = malloc(bytes ? bytes : 1);
  if (!buf) return ox_model_err(m, BG_ENOMEM, "%s: out of host memory (%zu bytes)", where, bytes);
  if (!numel) {
    /* nothing to copy (the typed fields may be NULL) */
  } else if (tp->has_raw_data) {
    memcpy(buf, tp->raw_data.data, bytes);
  } else if (dt == BG_FLOAT32) {
    memcpy(buf, tp->float_data, bytes);
  } else if (dt == BG_FLOAT64) {
    memcpy(buf, tp->double_data, bytes);
  } else if (dt == BG_INT64) {
    memcpy(buf, tp->int64_data, bytes);
  } else if (dt == BG_UINT32 || dt == BG_UINT64) {
    for (size_t i = 0; i < numel; i++) {
      if (dt == BG_UINT32) {
        uint32_t u = (uint32_t)tp->uint64_data[i];
        memcpy(buf + 4 * i, &u, 4);
      } else {
        memcpy(buf + 8 * i, &tp->uint64_data[i], 8);
      }
    }
  } else {
    for (size_t i = 0; i < numel; i++) {
      int32_t x = tp->int32_data[i];
      if (es == 1) {
        buf[i] = (uint8_t)(dt == BG_BOOL ? x != 0 : x);
      } else if (es == 2) {
        uint16_t h = (uint16_t)x;
        memcpy(buf + 2 * i, &h, 2);
      } else {
        memcpy(buf + 4 * i, &x, 4);
      }
    }
  }
  if (v && is_int(dt) && numel <= 64) {
    free(v->ints);
    v->ints = malloc((numel ? numel : 1) * sizeof *v->ints);
    if (v->ints) {
      for (size_t i = 0; i < numel; i++) v->ints[i] = elem_int(buf, dt, i);
      v->nints = numel;
      v->have_ints = true;
    }
  }
  *out = bg_tn_from(c, dt, (unsigned)tp->n_dims, shape, buf);
  free(buf);
  if (!*out || bg_tctx_error(c))
    return ox_model_err(m, BG_EINVAL, "%s: cannot make the tensor: %s", where,
                        bg_tctx_error(c) ? bg_tctx_error(c) : bg_last_error());
  return 0;
}

int bg_onnx_load_tensor(bg_tctx *c, const char *path, bg_tensor **out, char *name, size_t name_cap) {
  if (!out) return bg_error(BG_EINVAL, "onnx: bg_onnx_load_tensor: out is NULL");
  *out = NULL;
  if (!c || !path) return bg_error(BG_EINVAL, "onnx: bg_onnx_load_tensor: %s is NULL", c ? "path" : "c");
  uint8_t *buf;
  size_t n;
  int r = ox_read_file(path, &buf, &n);
  if (r < 0) return r;
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, n, buf);
  free(buf);
  bg_onnx_model fake = {.name = (char *)path};
  if (!tp) return ox_model_err(&fake, BG_EFORMAT, "not a valid TensorProto (%zu bytes): truncated or malformed "
                               "protobuf", n);
  if (name && name_cap) snprintf(name, name_cap, "%s", tp->name ? tp->name : "");
  r = ox_tensor_from_proto(&fake, c, tp, "TensorProto", out, NULL);
  onnx__tensor_proto__free_unpacked(tp, NULL);
  return r;
}
