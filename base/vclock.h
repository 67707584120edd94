/* vclock.h: the process's virtual clock, when simulated devices keep one (devices/sim), for a
 * layer that cannot call them: the simulated cluster's transport (net/sim_transport.c) charges
 * each message in the virtual time of the devices' work, so that ranks running as processes of
 * one machine predict a cluster. The first simulated backend opened registers itself; without
 * one, messages cost nothing and only their values count. */
#ifndef PG_BASE_VCLOCK_H
#define PG_BASE_VCLOCK_H

typedef struct pg__vclock_ops {
    /* A call of the caller's (a transport call) begins: the host's time up to here counts, as
     * at the start of a backend call. */
    void (*enter)(void *ctx);
    /* It ends: the real time it took does not count (a wait for a message is no host work). */
    void (*leave)(void *ctx);
    double (*now)(void *ctx);                /* virtual nanoseconds */
    void (*advance_to)(void *ctx, double t); /* never backwards */
} pg__vclock_ops;

/* Register ctx's clock unless one is registered already (the first wins). */
void pg__vclock_register(const pg__vclock_ops *ops, void *ctx);
/* Remove it, if ctx is the one registered. */
void pg__vclock_unregister(void *ctx);
/* The registered clock: 1 and *ops, *ctx set; 0 when none. The registrant must stay open while
 * its caller uses it (a runtime's transport calls happen while its devices are open). */
int pg__vclock_get(const pg__vclock_ops **ops, void **ctx);
/* Whether the process is blocked until a message comes (a rank's wait found nothing else to do;
 * core/ranks.c sets it around its tests then): a simulated transport moves the clock to a
 * message's arrival only then, never for a test at a program point (the rank goes on, and
 * whether the message is already here in real time must not change virtual times). */
void pg__vclock_set_blocked(int on);
int pg__vclock_blocked(void);

#endif
