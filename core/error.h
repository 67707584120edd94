/* error.h: how every layer reports a failure: a status plus a thread-local message. */
#ifndef PG_ERROR_H
#define PG_ERROR_H

#include "polygpu.h"

#if defined(__GNUC__)
#define PG__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PG__PRINTF(a, b)
#endif

/* Set this thread's message (printf-style) and return `s`, so callers write
 * `return pg__error(PG_ERROR_ARGUMENT, "...", ...)`. Clears the detail log. */
pg_status pg__error(pg_status s, const char *fmt, ...) PG__PRINTF(2, 3);
/* Set the long detail (a compiler log); copied. */
void pg__error_set_log(const char *log);
/* Clear message and log: called on entry to public functions that can fail. */
void pg__error_clear(void);

#endif
