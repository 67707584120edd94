/* lpg_interrupt.c: Ctrl-C ends a wait. The lua interpreter handles SIGINT by setting a hook
 * that raises "interrupted!" at the next Lua instruction, which never comes while a call waits
 * inside polygpu; so the module chains its own handler in front: it notes the signal for the
 * runtime's interrupt check (the wait then ends with an "interrupted" error) and passes it on
 * to the handler that was there (lua.c's, or the default one, which ends the process). */
#include "lpg_internal.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t pending;
static struct sigaction previous;
static int installed;

static void on_sigint(int sig) {
    pending = 1;
    if (previous.sa_handler == SIG_IGN)
        return;
    if (previous.sa_handler == SIG_DFL) {
        /* The default would end the process now; a Lua script gets the error instead, and a
         * second Ctrl-C (while nothing waits) ends it as usual. */
        sigaction(SIGINT, &previous, NULL);
        installed = 0;
        return;
    }
    if (previous.sa_flags & SA_SIGINFO)
        return; /* not lua.c's (plain handler); nothing more is known to be safe to call */
    previous.sa_handler(sig);
}

static int check(void *ctx) {
    (void)ctx;
    if (!pending)
        return 0;
    pending = 0;
    return 1;
}

void lpg_interrupt_install(void) {
    struct sigaction cur;
    if (sigaction(SIGINT, NULL, &cur) != 0 || cur.sa_handler == on_sigint)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, &previous) == 0)
        installed = 1;
    pg_set_interrupt_check(check, NULL);
}
