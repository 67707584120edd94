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
/* An outer operation failed because of an inner one whose message is set: put the outer's
 * context before it ("compiling kernel 'saxpy' for GPU 1 (...): <the inner message>"), keep the
 * detail log, and return `s` (usually the inner status). Without an inner message it sets the
 * context alone. Use it where an error passes up through a layer that knows more about what was
 * being done; never pg__error there, which would replace the cause. */
pg_status pg__error_wrap(pg_status s, const char *fmt, ...) PG__PRINTF(2, 3);
/* Set the long detail (a compiler log); copied. */
void pg__error_set_log(const char *log);
/* Clear message and log: called on entry to public functions. Elsewhere only where a failure
 * is expected and handled (a fallback, a retry): say why beside the call, and log the message
 * first where a user could want to know it. */
void pg__error_clear(void);

#endif
