/* check.h: the engine's state checks (issue 37). Each module that owns state says what must
 * hold of it in a function that only reads (0: fine, else 1 with what is wrong in why), and
 * checks it with PG__CHECK where its work ends — coherence after a write or a copy, memory
 * after room is made, the histories after a computation is committed — as SQLite checks each
 * page's invariants under assert. Debug builds (NDEBUG undefined: CMake's Debug, which the
 * ASan and TSan suites use) check; other builds compile the checks out (the functions stay,
 * for tests/c/test_state_checks.c). A failed check prints what was wrong and where, and
 * aborts: the state is not what the code after it assumes. */
#ifndef PG_CORE_CHECK_H
#define PG_CORE_CHECK_H

#include "core/objects.h"

#include <stddef.h>

#ifdef NDEBUG
#define PG__CHECKS 0
#else
#define PG__CHECKS 1
#endif

/* PG__CHECK(fn, args...): calls fn(args..., why, sizeof why) and aborts naming the place and
 * the reason when it returns nonzero. Nothing at all when the checks are off. */
#if PG__CHECKS
#define PG__CHECK(fn, ...)                                                                         \
    do {                                                                                           \
        char why_[512];                                                                            \
        if (fn(__VA_ARGS__, why_, sizeof why_))                                                    \
            pg__check_failed(__FILE__, __LINE__, #fn, why_);                                       \
    } while (0)
#else
#define PG__CHECK(fn, ...) ((void)0)
#endif

_Noreturn void pg__check_failed(const char *file, int line, const char *check, const char *why);

/* Coherence (core/coherence.c), of one piece (or an array never cut): its valid locations
 * exist; it is valid somewhere unless its value is lost; a device location holding its value
 * (once written) has a buffer there, so an evicted buffer holds no current value; the
 * computation after which a valid location is current is a live one. */
int pg__coh_invariant(const pg__runtime *rt, const pg__array *a, char *why, size_t cap);
/* Memory (core/evict.c), of device dev: its bytes are within device_memory_limit; c (may be
 * NULL), about to run there, has every argument's buffer there; and so has every kernel issued
 * there and not known to be done (no evicted buffer is in use). */
int pg__evict_invariant(const pg__runtime *rt, int dev, const pg__comp *c, char *why, size_t cap);
/* The DAG (core/deps.c), of one piece's history and the computation c committed into it (may
 * be NULL): no edge goes to a freed computation (every writer, reader and parent is
 * referenced). */
int pg__deps_invariant(const pg__runtime *rt, const pg__array *a, const pg__comp *c, char *why,
                       size_t cap);

#endif
