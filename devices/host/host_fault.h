/* host_fault.h: kernel faults on CPU devices caught as errors. A fault (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGTRAP, SIGABRT) raised by kernel code on a device worker thread, or a kernel's own
 * exit/abort/assert/__trap, ends that kernel call on the worker instead of the process; faults
 * anywhere else go to the handler that was installed before ours. */
#ifndef PG_HOST_FAULT_H
#define PG_HOST_FAULT_H

#include <stddef.h>
#include <stdint.h>

/* What stopped a kernel call. */
typedef struct pg__host_fault {
    int sig;        /* the signal, or 0 when the kernel reported it itself (what says how) */
    int code;       /* si_code */
    uintptr_t addr; /* si_addr: the faulting address (SIGSEGV, SIGBUS) or instruction */
    char what[400]; /* one sentence saying what happened ("integer divide by zero (SIGFPE)") */
} pg__host_fault;

/* Install the process-wide handlers (once) and give the calling thread an alternate signal
 * stack, so that a kernel overflowing its stack can still be caught. Every thread that runs
 * kernel code calls it when it starts, and pg__host_fault_thread_end before it exits. */
void pg__host_fault_thread_begin(void);
void pg__host_fault_thread_end(void);

/* Run body(arg) on the calling thread with faults caught: 0 when it returned, -1 when it
 * faulted (*f filled; body's frames were abandoned, so it must hold no lock or resource that
 * outlives them). f->what names a stack overflow or an out-of-bounds access to a guarded buffer
 * (host_guard.h) where the address shows one. Calls may nest; the innermost one catches. */
int pg__host_fault_catch(void (*body)(void *), void *arg, pg__host_fault *f);

/* For the kernel side (pg__cpu_launch.fault): report a fault with a message and leave the
 * kernel call at once, as a signal would. Outside pg__host_fault_catch it prints the message
 * and aborts. */
_Noreturn void pg__host_fault_raise(const char *what);

#endif
