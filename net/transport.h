/* transport.h: messages between the processes (ranks) of one distributed run — MPI when the
 * library was built with it (net/mpi_transport.c), nothing otherwise (net/no_transport.c).
 *
 * A transport moves bytes between ranks and knows nothing else: no arrays, no DAG, no devices.
 * Core (core/ranks.c) decides who sends what, and posts every send and receive in program order
 * on both sides. Buffers are host memory the caller owns until the request is complete. A
 * transport over GPU memory (CUDA-aware MPI, or staging through pinned host memory in chunks)
 * fits behind the same calls: pg__net_cuda_aware says whether device pointers may be passed. */
#ifndef PG_NET_TRANSPORT_H
#define PG_NET_TRANSPORT_H

#include "core/polygpu.h"

#include <stddef.h>

typedef struct pg__net pg__net;         /* one runtime's channel: its own communicator */
typedef struct pg__net_req pg__net_req; /* a send or receive in flight */

/* Where this process sits in the run, as the launcher says (no MPI call): world size and rank,
 * and the number of ranks on this node and this one's index among them; size 1 when the
 * process was not started by mpirun (or a launcher of its kind). */
typedef struct pg__net_place {
    int size, rank, local_size, local_rank;
} pg__net_place;
void pg__net_launcher(pg__net_place *out);

/* Is a transport compiled in? */
int pg__net_available(void);

/* A channel for one runtime: MPI is initialised on the first call in the process (and finalised
 * at exit, only then), and each channel has a communicator of its own, so that two runtimes'
 * messages never match each other's. Collective: every rank opens its runtimes in the same
 * order. PG_ERROR_UNSUPPORTED when no transport is compiled in. */
pg_status pg__net_open(pg__net **out, int *rank, int *size);
void pg__net_close(pg__net *n); /* every request must be complete */

/* Nonblocking point-to-point: the bytes of buf to/from rank `peer` (a receive: -1, any rank),
 * matched by tag (0 .. pg__net_tag_max). Messages between two ranks with one tag arrive in the
 * order posted. */
int pg__net_tag_max(const pg__net *n);
pg_status pg__net_isend(pg__net *n, const void *buf, size_t bytes, int peer, int tag,
                        pg__net_req **out);
pg_status pg__net_irecv(pg__net *n, void *buf, size_t bytes, int peer, int tag, pg__net_req **out);
/* 1 when r is complete (then it is freed and must not be used again), 0 while in flight; an
 * error with the message set (r freed too). */
pg_status pg__net_test(pg__net_req *r, int *done);

/* Is a message from `peer` with `tag` waiting to be received? Then *msg is it, taken out of
 * matching, and *bytes its size: a receive of a message of unknown size (the receiver checks
 * its header before trusting its length), posted by pg__net_imrecv. */
typedef struct pg__net_msg pg__net_msg;
pg_status pg__net_improbe(pg__net *n, int peer, int tag, int *found, size_t *bytes,
                          pg__net_msg **msg);
/* Receive the message pg__net_improbe found into buf (bytes: its size); complete by
 * pg__net_test. msg is used up. */
pg_status pg__net_imrecv(pg__net_msg *msg, void *buf, size_t bytes, pg__net_req **out);
/* Give up request r (a receive that will never match): cancelled and freed. */
void pg__net_cancel(pg__net_req *r);
/* Can messages still be sent (MPI initialised and not yet finalised: a program's own MPI,
 * mpi4py's, may finalise it before polygpu's exit handler runs)? */
int pg__net_usable(void);
/* End every process of the run now, with exit status `code` (MPI_Abort): a rank that failed
 * ends the job rather than leave the others waiting. Returns only without a transport. */
void pg__net_abort(int code);

/* Can device pointers be passed to the calls above (a CUDA-aware MPI)? 0 without a transport. */
int pg__net_cuda_aware(void);

#endif
