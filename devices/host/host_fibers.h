/* host_fibers.h: per-thread memory for kernels whose blocks run as fibers (nvrtc/cpu_compile.h):
 * one stack per CUDA thread with a guard page below it, and a control area. */
#ifndef PG_HOST_FIBERS_H
#define PG_HOST_FIBERS_H

#include "nvrtc/cpu_compile.h"

/* pg__cpu_launch.fiber_memory for CPU-device launches: the calling thread's memory, grown to
 * nstacks stacks and extra_bytes, kept for its next launch and unmapped when it exits. Stacks
 * hold PG__HOST_STACK_BYTES each. 0 ok, -1 out of memory. */
int pg__host_fiber_memory(uint32_t nstacks, size_t extra_bytes, pg__cpu_fibers *out);

/* 1 if addr is in a guard page of the calling thread's fiber stacks (a fiber overflowed). */
int pg__host_fiber_guard(uintptr_t addr);

/* A GPU gives a thread 1 KiB of stack by default; kernel code on a CPU also calls the C library
 * (printf, libm), so a thread gets much more, and only the pages it touches cost memory. */
#define PG__HOST_STACK_BYTES ((size_t)64 * 1024)

#endif
