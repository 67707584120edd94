/* host_fault.c: turns a fault in kernel code on a CPU device worker into an error of that kernel
 * call, and leaves every other fault to whoever handled it before.
 *
 * Why signals and siglongjmp: kernels run in this process, on our worker threads, so a wild
 * pointer, an integer division by zero, a trap or abort() arrives as a synchronous signal on
 * the very thread that ran the kernel. A process-wide handler (installed once, chaining to the
 * previous handler) looks at a thread-local pointer that only a worker inside a kernel call
 * sets; when set, it jumps back to where the worker called the kernel, and the worker reports
 * the call as failed and goes on. Anything else (another thread, a fault in our own code, a
 * signal sent with kill) goes to the previous handler untouched, so the interpreter's own
 * handlers keep working: the JVM's SIGSEGV handler (implicit null checks, safepoint polls),
 * Python's faulthandler, ASan's. A child process per kernel call would isolate more but costs
 * a copy of every buffer; a separate process per device would need shared memory for every
 * array. The kernel's own exit()/abort()/assert/__trap (routed by the CPU prelude) take the same
 * jump without a signal.
 *
 * The handler runs on a per-worker alternate signal stack (SA_ONSTACK), so a kernel that
 * overflowed its stack can still be caught; fiber stacks (host_fibers.c) have guard pages for
 * the same reason, and the jump lands on the worker's own stack. The kernel holds none of our
 * locks while it runs (the pool and stream workers release theirs first), and every launch sets
 * up its block and fiber state afresh, so a worker is sane after the jump. What a jump cannot
 * repair: locks the kernel took itself inside the C library (a fault inside printf or malloc
 * leaves that lock held), memory the kernel corrupted before it faulted, and C++ destructors of
 * the abandoned frames (skipped). */

/* With _FORTIFY_SOURCE, siglongjmp becomes __longjmp_chk, which aborts a jump from a fiber
 * stack to the worker's stack (it only allows jumps up the current stack or off the signal
 * stack). */
#undef _FORTIFY_SOURCE
#include "devices/host/host_fault.h"
#include "devices/host/host_fibers.h"
#include "devices/host/host_guard.h"

#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The handler's own stack: it only records and jumps, but a chained handler (faulthandler,
 * the JVM's) may run on it too. */
#define ALT_STACK_BYTES ((size_t)64 * 1024)

static const int caught[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT};
#define NCAUGHT ((int)(sizeof caught / sizeof *caught))

typedef struct catcher {
    sigjmp_buf jb;
    pg__host_fault *f;
    struct catcher *prev;
} catcher;

/* The innermost kernel call of each thread, or NULL: a thread-specific value rather than a
 * thread_local, because the handler reads it on any thread. In a dlopen'ed library a
 * thread_local may be allocated on a thread's first access (not async-signal-safe), and the
 * initial-exec model that avoids that would put all of this library's TLS in glibc's small
 * static reserve, which dlopen then refuses. pthread_getspecific is a plain array read in glibc
 * and musl. The key is made before the handlers are installed. */
static pthread_key_t catcher_key;
static int installed;

/* This thread's stack and alternate stack (read outside the handler only). */
static __thread struct {
    uintptr_t lo, guard;
    void *alt;
    size_t alt_len;
} me;

static struct sigaction previous[NSIG];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Raised by this thread's own code (a fault, raise(), abort()), not sent by another process. */
static int synchronous(const siginfo_t *si) {
    return si->si_code > 0 || (si->si_code == SI_TKILL && si->si_pid == getpid());
}

/* Run the handler that was there before ours, as the kernel would have run it. */
static void chain(int sig, siginfo_t *si, void *uc) {
    struct sigaction o = previous[sig];
    int is_default = !(o.sa_flags & SA_SIGINFO) && o.sa_handler == SIG_DFL;
    int is_ignore = !(o.sa_flags & SA_SIGINFO) && o.sa_handler == SIG_IGN;
    if (is_ignore && si->si_code <= 0)
        return;
    if (is_default || is_ignore) {
        /* Die as without polygpu: a fault happens again when the handler returns (except a
         * breakpoint, whose instruction is done), a raised signal is raised again. */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        if (si->si_code <= 0 || sig == SIGTRAP)
            raise(sig);
        return;
    }
    if (o.sa_flags & SA_RESETHAND) {
        memset(&previous[sig], 0, sizeof previous[sig]);
        previous[sig].sa_handler = SIG_DFL;
    }
    sigset_t mask = o.sa_mask, saved;
    if (!(o.sa_flags & SA_NODEFER))
        sigaddset(&mask, sig);
    pthread_sigmask(SIG_BLOCK, &mask, &saved);
    if (o.sa_flags & SA_NODEFER) {
        sigset_t self;
        sigemptyset(&self);
        sigaddset(&self, sig);
        pthread_sigmask(SIG_UNBLOCK, &self, NULL);
    }
    if (o.sa_flags & SA_SIGINFO)
        o.sa_sigaction(sig, si, uc);
    else
        o.sa_handler(sig);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

static void on_signal(int sig, siginfo_t *si, void *uc) {
    catcher *c = pthread_getspecific(catcher_key);
    if (!c || !synchronous(si)) {
        chain(sig, si, uc);
        return;
    }
    c->f->sig = sig;
    c->f->code = si->si_code;
    c->f->addr = (uintptr_t)si->si_addr;
    c->f->what[0] = '\0';
    /* The jump does not restore the signal mask (saving it would cost a system call per
     * kernel call): unblock the signal the kernel blocked for this handler. */
    sigset_t self;
    sigemptyset(&self);
    sigaddset(&self, sig);
    pthread_sigmask(SIG_UNBLOCK, &self, NULL);
    siglongjmp(c->jb, 1);
}

static void install(void) {
    if (pthread_key_create(&catcher_key, NULL) != 0)
        return; /* faults then end the process, as before */
    installed = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NCAUGHT; i++) {
        /* The previous action is read first, so a signal arriving while ours goes in finds it. */
        if (sigaction(caught[i], NULL, &previous[caught[i]]) == 0)
            sigaction(caught[i], &sa, NULL);
    }
    /* Our handler stays installed for the life of the process, so this library must too: an
     * interpreter that unloads its extension modules (Lua at lua_close) would otherwise leave
     * the handler pointing at unmapped code. */
    Dl_info info;
    if (dladdr((void *)on_signal, &info) && info.dli_fname)
        (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

void pg__host_fault_thread_begin(void) {
    pthread_once(&once, install);
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        void *lo = NULL;
        size_t size = 0, guard = 0;
        pthread_attr_getstack(&a, &lo, &size);
        pthread_attr_getguardsize(&a, &guard);
        me.lo = (uintptr_t)lo;
        me.guard = guard;
        pthread_attr_destroy(&a);
    }
    stack_t cur;
    /* A thread that has one already (a sanitizer gives every thread one) keeps it. */
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE) &&
        cur.ss_size >= (size_t)MINSIGSTKSZ)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = ALT_STACK_BYTES + page;
    unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return; /* faults are still caught, except a stack overflow */
    mprotect(p, page, PROT_NONE);
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = p + page;
    ss.ss_size = ALT_STACK_BYTES;
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(p, len);
        return;
    }
    me.alt = p;
    me.alt_len = len;
}

void pg__host_fault_thread_end(void) {
    if (!me.alt)
        return;
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, NULL);
    munmap(me.alt, me.alt_len);
    me.alt = NULL;
}

/* In (or just below) the guard page under this thread's own stack. */
static int own_stack_overflow(uintptr_t addr) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t below = me.guard + page;
    return me.lo && addr < me.lo + page && addr + below >= me.lo;
}

/* One sentence for f; on the thread that caught it, whose stacks are the ones to look at. */
static void describe(const pg__host_fault *f, char *out, size_t cap) {
    char where[320] = "";
    switch (f->sig) {
    case SIGSEGV:
    case SIGBUS:
        if (!pg__host_guard_describe(f->addr, where, sizeof where) &&
            (own_stack_overflow(f->addr) || pg__host_fiber_guard(f->addr)))
            snprintf(where, sizeof where,
                     "stack overflow (deep recursion or large local arrays in the kernel)");
        snprintf(out, cap, "%s at address %#llx%s%s",
                 f->sig == SIGSEGV ? "invalid memory access (SIGSEGV)" : "bus error (SIGBUS)",
                 (unsigned long long)f->addr, where[0] ? ": " : "", where);
        return;
    case SIGFPE:
        snprintf(out, cap, "%s",
                 f->code == FPE_INTDIV   ? "integer divide by zero (SIGFPE)"
                 : f->code == FPE_INTOVF ? "integer overflow in a division (SIGFPE)"
                                         : "arithmetic exception (SIGFPE)");
        return;
    case SIGILL:
        snprintf(out, cap,
                 "illegal instruction (SIGILL) at %#llx: __builtin_trap(), or an instruction "
                 "this CPU lacks",
                 (unsigned long long)f->addr);
        return;
    case SIGTRAP:
        snprintf(out, cap, "breakpoint trap (SIGTRAP)");
        return;
    case SIGABRT:
        snprintf(out, cap, "abort() was called (SIGABRT)");
        return;
    }
    snprintf(out, cap, "signal %d", f->sig);
}

int pg__host_fault_catch(void (*body)(void *), void *arg, pg__host_fault *f) {
    catcher c;
    c.f = f;
    if (!installed) {
        body(arg); /* no way to catch: run it as before */
        return 0;
    }
    c.prev = pthread_getspecific(catcher_key);
    if (sigsetjmp(c.jb, 0)) {
        pthread_setspecific(catcher_key, c.prev);
        if (f->sig) {
            char what[sizeof f->what];
            describe(f, what, sizeof what);
            memcpy(f->what, what, sizeof what);
        }
        return -1;
    }
    if (pthread_setspecific(catcher_key, &c) != 0) {
        body(arg);
        return 0;
    }
    body(arg);
    pthread_setspecific(catcher_key, c.prev);
    return 0;
}

_Noreturn void pg__host_fault_raise(const char *what) {
    catcher *c = installed ? pthread_getspecific(catcher_key) : NULL;
    if (!c) {
        fprintf(stderr, "polygpu: %s (outside a CPU device kernel call)\n", what);
        abort();
    }
    c->f->sig = 0;
    c->f->code = 0;
    c->f->addr = 0;
    snprintf(c->f->what, sizeof c->f->what, "%s", what ? what : "the kernel failed");
    siglongjmp(c->jb, 1);
}
