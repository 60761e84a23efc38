/* cpu/cpu_fault.c: a CPU kernel that faults (wild pointer, integer division by zero, stack
 * overflow) is reported as a fault of its queue instead of killing the process.
 *
 * One handler per synchronous signal, installed once per process. On a worker thread inside a
 * kernel (a thread-local context marked armed) it records the signal and siglongjmps back into
 * the worker (cpu_worker.c exec); anywhere else it hands the signal to the handler that was there
 * before, or lets the default action happen, so real crashes still crash. The same technique as
 * a JIT's or a managed runtime's guard-page handler (e.g. OpenJDK's JVM_handle_linux_signal,
 * os_linux_x86.cpp), and the worker runs it on its own signal stack (sigaltstack(2)) so even a
 * kernel's stack overflow is caught. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

#include "cpu/cpu.h"

static const int fault_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
enum { NFAULT = sizeof(fault_sigs) / sizeof(fault_sigs[0]) };

static struct sigaction prev[NFAULT];   /* what the application (or a sanitizer) had installed */
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_errno;

/* initial-exec: the handler may run on any thread, and reading a TLS variable of the
 * dynamic model could allocate on a thread's first access (not async-signal-safe). */
static __thread cpu_fault_ctx *tls_ctx __attribute__((tls_model("initial-exec")));

static int slot_of(int sig) {
  for (int i = 0; i < NFAULT; i++)
    if (fault_sigs[i] == sig) return i;
  return 0;
}

static void set_default(int sig) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
}

/* Do what would have happened without us: the previous handler with its mask, or the default
 * action. A fault raised by an instruction (si_code > 0) repeats when the handler returns, so
 * with the default action restored it then kills the process with the right signal and core. */
static void chain(int sig, siginfo_t *si, void *uc) {
  const struct sigaction *p = &prev[slot_of(sig)];
  bool from_insn = si && si->si_code > 0;
  bool has_info = (p->sa_flags & SA_SIGINFO) && p->sa_sigaction;
  if (has_info || (!(p->sa_flags & SA_SIGINFO) && p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN)) {
    if (p->sa_flags & SA_RESETHAND) set_default(sig);
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &p->sa_mask, &old);
    if (has_info) p->sa_sigaction(sig, si, uc);
    else p->sa_handler(sig);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return;
  }
  if (p->sa_handler == SIG_IGN && !from_insn) return;   /* an ignored signal someone sent */
  set_default(sig);
  if (!from_insn) raise(sig);   /* pending until this handler returns, then the default action */
}

static uintptr_t context_pc(const void *uc) {
  const ucontext_t *u = uc;
#if defined(__x86_64__)
  return (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
  return (uintptr_t)u->uc_mcontext.gregs[REG_EIP];
#elif defined(__aarch64__)
  return (uintptr_t)u->uc_mcontext.pc;
#else
  (void)u;
  return 0;
#endif
}

static void on_fault(int sig, siginfo_t *si, void *uc) {
  cpu_fault_ctx *f = tls_ctx;
  /* Only faults of the kernel's own instructions: a signal another process sent is not one. */
  if (f && f->armed && si && si->si_code > 0) {
    f->armed = 0;
    f->sig = sig;
    f->code = si->si_code;
    f->addr = (uintptr_t)si->si_addr;
    f->pc = uc ? context_pc(uc) : 0;
    siglongjmp(f->jmp, 1);
  }
  int saved = errno;
  chain(sig, si, uc);
  errno = saved;
}

static void install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < NFAULT; i++) {
    /* Read the previous action first, so the handler never sees it half written. */
    if (sigaction(fault_sigs[i], NULL, &prev[i]) != 0 || sigaction(fault_sigs[i], &sa, NULL) != 0) {
      install_errno = errno;
      return;
    }
  }
}

int bg_cpu_fault_install(void) {
  pthread_once(&install_once, install);
  if (install_errno)
    return bg_error(BG_EIO, "cpu: cannot install the kernel fault handlers: sigaction: %s", strerror(install_errno));
  return 0;
}

int bg_cpu_fault_thread_init(cpu_fault_ctx *f) {
  int r = 0;
  /* A sanitizer may have given the thread a signal stack already: keep it (it frees it itself). */
  stack_t cur;
  if (f->altstack && (sigaltstack(NULL, &cur) != 0 || (cur.ss_flags & SS_DISABLE))) {
    stack_t st = {.ss_sp = f->altstack, .ss_flags = 0, .ss_size = f->altstack_size};
    if (sigaltstack(&st, NULL) != 0)
      r = bg_error(BG_EIO, "cpu: sigaltstack for a worker: %s (a kernel's stack overflow kills the process)",
                   strerror(errno));
  }
  /* The worker was created with every signal blocked; a blocked fault signal would kill the
   * process without running any handler (the kernel forces the default action). */
  sigset_t s;
  sigemptyset(&s);
  for (int i = 0; i < NFAULT; i++) sigaddset(&s, fault_sigs[i]);
  pthread_sigmask(SIG_UNBLOCK, &s, NULL);
  tls_ctx = f;
  return r;
}

void bg_cpu_fault_thread_fini(cpu_fault_ctx *f) {
  tls_ctx = NULL;
  stack_t cur;
  if (f->altstack && sigaltstack(NULL, &cur) == 0 && cur.ss_sp == f->altstack) {
    stack_t off = {.ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0};
    sigaltstack(&off, NULL);
  }
}

static const char *code_name(int sig, int code) {
  switch (sig) {
  case SIGSEGV:
    return code == SEGV_MAPERR ? "address not mapped" : code == SEGV_ACCERR ? "access not permitted" : "segfault";
  case SIGBUS:
    return code == BUS_ADRALN ? "misaligned access" : code == BUS_ADRERR ? "nonexistent physical address"
                                                    : "bus error";
  case SIGFPE:
    return code == FPE_INTDIV ? "integer divide by zero" : code == FPE_INTOVF ? "integer overflow"
                                                         : "floating-point exception";
  default:
    return code == ILL_ILLOPC ? "illegal opcode" : "illegal instruction";
  }
}

/* "0x7f..1234 (add_k+0x14)" when dladdr finds the symbol, else the bare address. */
static void name_pc(uintptr_t pc, char *buf, size_t n) {
  Dl_info di;
  if (pc && dladdr((void *)pc, &di) && di.dli_sname && di.dli_saddr)
    snprintf(buf, n, "0x%llx (%s+0x%llx)", (unsigned long long)pc, di.dli_sname,
             (unsigned long long)(pc - (uintptr_t)di.dli_saddr));
  else
    snprintf(buf, n, "0x%llx", (unsigned long long)pc);
}

void bg_cpu_fault_describe(const cpu_fault_ctx *f, char *buf, size_t n) {
  /* The jump left the signal blocked (sigsetjmp without the mask keeps launches syscall-free). */
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, f->sig);
  pthread_sigmask(SIG_UNBLOCK, &s, NULL);
  const char *sname = f->sig == SIGSEGV ? "SIGSEGV" : f->sig == SIGBUS ? "SIGBUS" : f->sig == SIGFPE ? "SIGFPE" : "SIGILL";
  char where[160];
  name_pc(f->pc ? f->pc : f->addr, where, sizeof(where));
  if (f->sig == SIGSEGV && f->code == SI_KERNEL)   /* x86 general protection: si_addr is not the address */
    snprintf(buf, n, "SIGSEGV (general protection: a non-canonical or kernel address), at instruction %s", where);
  else if (f->sig == SIGSEGV || f->sig == SIGBUS)
    snprintf(buf, n, "%s (%s) accessing address 0x%llx, at instruction %s", sname, code_name(f->sig, f->code),
             (unsigned long long)f->addr, where);
  else
    snprintf(buf, n, "%s (%s) at address %s", sname, code_name(f->sig, f->code), where);
}
