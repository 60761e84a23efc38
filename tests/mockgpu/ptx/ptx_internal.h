/* tests/mockgpu/ptx/ptx_internal.h: the parsed form of a PTX module shared by the parser, the
 * operand reader, the arithmetic, memory and launch files. */
#ifndef BG_MOCKGPU_PTX_INTERNAL_H
#define BG_MOCKGPU_PTX_INTERNAL_H

#include "ptx.h"
#include <stdbool.h>

enum ptx_type { T_NONE, T_PRED, T_B8, T_B16, T_B32, T_B64, T_U8, T_U16, T_U32, T_U64, T_S8, T_S16, T_S32, T_S64,
                T_F16, T_F16X2, T_F32, T_F64, T_F32X2 };
enum ptx_space { SP_GENERIC, SP_PARAM, SP_GLOBAL, SP_SHARED, SP_LOCAL };
enum ptx_rnd { R_NONE, R_RN, R_RZ, R_RM, R_RP, R_RNI, R_RZI, R_RMI, R_RPI };
enum ptx_cmp { C_NONE, C_EQ, C_NE, C_LT, C_LE, C_GT, C_GE, C_LO, C_LS, C_HI, C_HS, C_EQU, C_NEU, C_LTU, C_LEU,
               C_GTU, C_GEU, C_NUM, C_NAN };
enum ptx_op { OP_LD, OP_ST, OP_MOV, OP_CVTA, OP_ADD, OP_SUB, OP_MUL, OP_MAD, OP_FMA, OP_DIV, OP_REM, OP_MIN,
              OP_MAX, OP_NEG, OP_ABS, OP_RCP, OP_SQRT, OP_RSQRT, OP_EX2, OP_LG2, OP_SIN, OP_COS, OP_AND, OP_OR,
              OP_XOR, OP_NOT, OP_SHL, OP_SHR, OP_SETP, OP_SELP, OP_CVT, OP_BRA, OP_RET, OP_EXIT, OP_BAR,
              OP_ATOM, OP_RED, OP_SHF };
/* Modifier flags. */
#define F_LO 0x1u
#define F_HI 0x2u
#define F_WIDE 0x4u
#define F_FTZ 0x8u
#define F_SAT 0x10u
#define F_APPROX 0x20u
#define F_TO 0x40u
/* shf: direction and mode (exactly one of each) */
#define F_SHF_L 0x80u
#define F_SHF_R 0x100u
#define F_WRAP 0x200u
#define F_CLAMP 0x400u

/* Special registers: %tid/%ntid/%ctaid/%nctaid .x/.y/.z, then %laneid, %warpid. */
enum { S_TID = 0, S_NTID = 3, S_CTAID = 6, S_NCTAID = 9, S_LANEID = 12, S_WARPID = 13 };

enum ptx_okind { O_REG, O_IMM, O_SREG, O_ADDR, O_VEC, O_LABEL, O_SYM, O_SINK };
typedef struct ptx_opnd {
  uint8_t kind;
  uint8_t nv;                 /* O_VEC: element count */
  int32_t reg;                /* O_REG / O_ADDR base register (-1: none) / O_SREG id / O_LABEL target */
  int32_t sym;                /* O_SYM / O_ADDR symbol (-1: none) */
  int32_t vr[4];              /* O_VEC registers (-1: sink, -2: the immediate vimm[i], sources only) */
  uint64_t vimm[4];
  int64_t off;                /* O_ADDR offset */
  uint64_t imm;               /* O_IMM bits */
} ptx_opnd;

typedef struct ptx_ins {
  int line;
  char *text;                 /* the statement as written, for reports */
  uint8_t op, space, rnd, cmp, vec, ntypes, atom_op;
  uint8_t type[2];            /* cvt: dst, src; otherwise type[0] */
  uint32_t flags;
  int32_t pred;               /* guard predicate register, -1: none */
  bool pred_neg;
  uint8_t nops;
  ptx_opnd ops[5];
} ptx_ins;

typedef struct ptx_reg_decl { char name[64]; uint8_t type; int count; int base; } ptx_reg_decl;
typedef struct ptx_sym { char name[64]; int entry; uint8_t space; uint64_t off, size, align; } ptx_sym;
typedef struct ptx_label { char name[64]; int ins; } ptx_label;

typedef struct ptx_entry {
  char name[128];
  ptx_ins *ins; int nins, cap_ins;
  ptx_reg_decl *regs; int nregdecl, cap_regs, nregs;
  int first_sym;              /* params and locals: syms[first_sym..] belong to this entry (and module ones before) */
  int nparams;
  uint64_t param_size, local_size, shared_size;
  ptx_label *labels; int nlabels, cap_labels;
} ptx_entry;

struct ptx_module {
  ptx_entry *entries; int nentries;
  ptx_sym *syms; int nsyms, cap_syms;
  uint64_t shared_module;     /* bytes of module-scope .shared */
};

/* Generic-address windows (cvta.shared / cvta.local): above every 57-bit global address. */
#define PTX_WIN_SHARED 0x7e00000000000000ull
#define PTX_WIN_LOCAL 0x7f00000000000000ull
#define PTX_WIN_SIZE 0x100000000ull

int ptx_type_size(int t);
bool ptx_type_float(int t);
bool ptx_type_signed(int t);
int ptx_parse_type(const char *s);

/* Parse one instruction statement into e (the parser's part for instructions, ptx_ins_parse.c). */
int ptx_ins_parse(ptx_module *m, ptx_entry *e, const char *stmt, int line, char *err, size_t errlen);
int ptx_find_reg(const ptx_entry *e, const char *name, int *type);
int ptx_label_ref(ptx_entry *e, const char *name);
int ptx_find_sym(const ptx_module *m, const ptx_entry *e, const char *name);

/* Execution state of one thread and its CTA. */
typedef struct ptx_cta {
  const ptx_module *m; const ptx_entry *e; const ptx_launch *l;
  uint8_t *shared; uint64_t shared_size;
  uint32_t ctaid[3];
  char *err; size_t errlen;   /* message of the failing instruction (the launch adds where) */
} ptx_cta;
typedef struct ptx_thread {
  uint64_t *r; uint8_t *local; uint32_t tid[3], lane, warp;
  int pc;
} ptx_thread;

/* Operand values (ptx_operand.c). */
uint64_t ptx_get(const ptx_cta *c, const ptx_thread *t, const ptx_opnd *o, int type);
/* Element i of a source vector operand: a register's bits, an immediate, 0 for a sink. */
static inline uint64_t ptx_vec_elem(const ptx_thread *t, const ptx_opnd *o, int i) {
  return o->vr[i] == -2 ? o->vimm[i] : o->vr[i] < 0 ? 0 : t->r[o->vr[i]];
}
void ptx_set(ptx_thread *t, const ptx_opnd *o, uint64_t v, int type);
/* Arithmetic (ptx_arith.c, ptx_cvt.c): -1 with c->err for what it does not implement. */
int ptx_exec_alu(ptx_cta *c, ptx_thread *t, const ptx_ins *in);
int ptx_exec_cvt(ptx_cta *c, ptx_thread *t, const ptx_ins *in);
/* Memory (ptx_memory.c). */
int ptx_exec_mem(ptx_cta *c, ptx_thread *t, const ptx_ins *in);
uint64_t ptx_sym_addr(const ptx_module *m, int sym);

float ptx_h2f(uint16_t h);
uint16_t ptx_f2h(float f);
uint16_t ptx_d2h(double d);

#endif
