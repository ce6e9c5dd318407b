// A stack report for machines without gdb (the GPU machine), preloaded by scripts/gpu-check.sh
// into a workload that died of a signal:
//
//   cc -shared -fPIC -O1 -o crash-report.so scripts/crash-report.c -ldl
//   LD_PRELOAD=./crash-report.so program ...
//
// On SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT it prints to stderr the faulting address, the
// program counter and every word of the stack, from the stack pointer up, that points into
// executable code: a heuristic backtrace (return addresses and stale ones) that survives a
// call through a null pointer, where unwinding stops at once. Each line is
//   crash-report: <pc|stack> FILE OFFSET [SYMBOL]
// with OFFSET what `addr2line -e FILE` takes. Open MPI installs handlers of its own at
// MPI_Init: run with OMPI_MCA_opal_signal= (empty) so that this one stays.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>  // ElfW
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

enum { max_ranges = 1024, max_lines = 64, scan_words = 1 << 16 };

struct Range {
  uintptr_t begin, end;
};
static struct Range code[max_ranges];  // executable mappings
static int n_code;
static struct Range stack;  // the mapping that holds the stack pointer

static void say(const char* text) { (void)!write(2, text, strlen(text)); }

static void read_mappings(uintptr_t sp) {
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[512];
  if (!maps) return;
  while (fgets(line, sizeof line, maps)) {
    unsigned long begin, end;
    char perms[8];
    if (sscanf(line, "%lx-%lx %7s", &begin, &end, perms) != 3) continue;
    if (perms[2] == 'x' && n_code < max_ranges) code[n_code++] = (struct Range){begin, end};
    if (sp >= begin && sp < end) stack = (struct Range){sp, end};
  }
  fclose(maps);
}

static int is_code(uintptr_t address) {
  for (int k = 0; k < n_code; ++k)
    if (address >= code[k].begin && address < code[k].end) return 1;
  return 0;
}

// FILE OFFSET [SYMBOL]: offsets from the load base of position-independent files, absolute
// addresses in fixed-address executables (what addr2line expects of each).
static void report(const char* kind, uintptr_t address) {
  Dl_info info;
  char line[1024];
  if (!dladdr((void*)address, &info) || !info.dli_fname) {
    snprintf(line, sizeof line, "crash-report: %s ? 0x%lx\n", kind, (unsigned long)address);
  } else {
    const ElfW(Ehdr)* header = (const ElfW(Ehdr)*)info.dli_fbase;
    const uintptr_t base = header->e_type == ET_EXEC ? 0 : (uintptr_t)info.dli_fbase;
    snprintf(line, sizeof line, "crash-report: %s %s 0x%lx %s\n", kind, info.dli_fname,
             (unsigned long)(address - base), info.dli_sname ? info.dli_sname : "");
  }
  say(line);
}

static void on_signal(int signal, siginfo_t* info, void* context) {
  const ucontext_t* uc = (const ucontext_t*)context;
#if defined(__x86_64__)
  const uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
  const uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
  const uintptr_t pc = (uintptr_t)uc->uc_mcontext.pc;
  const uintptr_t sp = (uintptr_t)uc->uc_mcontext.sp;
#else
#error "crash-report.c: add this architecture's program counter and stack pointer"
#endif
  char line[256];
  snprintf(line, sizeof line, "crash-report: signal %d (%s), address %p, pc 0x%lx, sp 0x%lx\n",
           signal, strsignal(signal), info->si_addr, (unsigned long)pc, (unsigned long)sp);
  say(line);
  read_mappings(sp);
  report("pc", pc);
  int lines = 0;
  for (uintptr_t at = stack.begin; at + sizeof(uintptr_t) <= stack.end && lines < max_lines &&
                                   at < stack.begin + scan_words * sizeof(uintptr_t);
       at += sizeof(uintptr_t)) {
    const uintptr_t word = *(const uintptr_t*)at;
    if (is_code(word)) {
      report("stack", word);
      ++lines;
    }
  }
  say("crash-report: end\n");
  // Die of the same signal, as the program would have.
  struct sigaction fallback = {0};
  fallback.sa_handler = SIG_DFL;
  sigaction(signal, &fallback, NULL);
  raise(signal);
}

__attribute__((constructor)) static void install(void) {
  static char alternate[1 << 16];  // handlers run here, so a stack overflow is reported too
  stack_t alt = {.ss_sp = alternate, .ss_size = sizeof alternate, .ss_flags = 0};
  sigaltstack(&alt, NULL);
  struct sigaction action = {0};
  action.sa_sigaction = on_signal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  const int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
  for (size_t k = 0; k < sizeof signals / sizeof *signals; ++k)
    sigaction(signals[k], &action, NULL);
}
