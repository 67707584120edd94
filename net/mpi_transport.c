/* mpi_transport.c: the transport over MPI (net/transport.h). MPI is initialised by the first
 * channel opened in the process unless the program did it already (mpi4py, a C program's own
 * MPI_Init), and then finalised at exit by us only if we initialised it. Each channel is a
 * duplicate of MPI_COMM_WORLD. Threads: calls come under one runtime's lock, but two runtimes
 * may be used from two threads, so MPI_THREAD_MULTIPLE is asked for; a library that gives less
 * than SERIALIZED is refused. */
#include "net/transport.h"
#include "base/alloc.h"
#include "base/error.h"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* OpenMPI: MPIX_Query_cuda_support */
#endif
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct pg__net {
    MPI_Comm comm;
    int tag_max;
};

struct pg__net_req {
    MPI_Request r;
};

static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
static int we_initialised;

static void finalize_at_exit(void) {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin)
        MPI_Finalize();
}

int pg__net_available(void) {
    return 1;
}

static pg_status mpi_error(int code, const char *what) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS)
        len = 0;
    msg[len] = 0;
    return pg__error(PG_ERROR_DEVICE, "MPI: %s failed: %s", what, len ? msg : "(no message)");
}

static pg_status init_once(void) {
    pthread_mutex_lock(&init_mu);
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&fin);
    pg_status st = PG_OK;
    if (fin)
        st = pg__error(PG_ERROR_STATE, "MPI was finalised already: no runtime can use ranks now");
    else if (!inited) {
        int provided = 0;
        int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
        if (rc != MPI_SUCCESS)
            st = mpi_error(rc, "MPI_Init_thread");
        else {
            we_initialised = 1;
            atexit(finalize_at_exit);
            if (provided < MPI_THREAD_SERIALIZED)
                st = pg__error(PG_ERROR_UNSUPPORTED,
                               "MPI gives thread level %d; polygpu needs MPI_THREAD_SERIALIZED "
                               "or more",
                               provided);
        }
    } else {
        int provided = 0;
        MPI_Query_thread(&provided);
        if (provided < MPI_THREAD_SERIALIZED)
            st = pg__error(PG_ERROR_UNSUPPORTED,
                           "the program initialised MPI with thread level %d; polygpu needs "
                           "MPI_THREAD_SERIALIZED or more (MPI_Init_thread)",
                           provided);
    }
    pthread_mutex_unlock(&init_mu);
    return st;
}

pg_status pg__net_open(pg__net **out, int *rank, int *size) {
    pg_status st = init_once();
    if (st)
        return st;
    pg__net *n = pg__calloc(1, sizeof *n);
    if (!n)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &n->comm);
    if (rc != MPI_SUCCESS) {
        pg__free(n);
        return mpi_error(rc, "MPI_Comm_dup");
    }
    /* Errors come back as codes, to be reported as values, not abort the job. */
    MPI_Comm_set_errhandler(n->comm, MPI_ERRORS_RETURN);
    void *ub = NULL;
    int flag = 0;
    MPI_Comm_get_attr(n->comm, MPI_TAG_UB, &ub, &flag);
    n->tag_max = flag && ub ? *(int *)ub : 32767;
    MPI_Comm_rank(n->comm, rank);
    MPI_Comm_size(n->comm, size);
    *out = n;
    return PG_OK;
}

void pg__net_close(pg__net *n) {
    if (!n)
        return;
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin)
        MPI_Comm_free(&n->comm);
    pg__free(n);
}

int pg__net_tag_max(const pg__net *n) {
    return n->tag_max;
}

static pg_status post(pg__net *n, void *buf, size_t bytes, int peer, int tag, int send,
                      pg__net_req **out) {
    if (bytes > (size_t)0x7fffffff)
        return pg__error(PG_ERROR_UNSUPPORTED,
                         "a message of %zu bytes: the transport sends at most 2 GiB at once",
                         bytes);
    pg__net_req *r = pg__malloc(sizeof *r);
    if (!r)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    int rc = send ? MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, tag, n->comm, &r->r)
                  : MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer < 0 ? MPI_ANY_SOURCE : peer, tag,
                              n->comm, &r->r);
    if (rc != MPI_SUCCESS) {
        pg__free(r);
        return mpi_error(rc, send ? "MPI_Isend" : "MPI_Irecv");
    }
    *out = r;
    return PG_OK;
}

pg_status pg__net_isend(pg__net *n, const void *buf, size_t bytes, int peer, int tag,
                        pg__net_req **out) {
    return post(n, (void *)(uintptr_t)buf, bytes, peer, tag, 1, out);
}

pg_status pg__net_irecv(pg__net *n, void *buf, size_t bytes, int peer, int tag, pg__net_req **out) {
    return post(n, buf, bytes, peer, tag, 0, out);
}

pg_status pg__net_test(pg__net_req *r, int *done) {
    int flag = 0, fin = 0;
    MPI_Finalized(&fin);
    if (fin) { /* a runtime closed after exit began: MPI is gone, and so is the message */
        pg__free(r);
        *done = 1;
        return pg__error(PG_ERROR_STATE, "MPI was finalised with a message in flight");
    }
    MPI_Status status;
    int rc = MPI_Test(&r->r, &flag, &status);
    if (rc != MPI_SUCCESS) {
        pg__free(r);
        *done = 1;
        return mpi_error(rc, "MPI_Test");
    }
    *done = flag;
    if (flag)
        pg__free(r);
    return PG_OK;
}

struct pg__net_msg {
    MPI_Message m;
};

pg_status pg__net_improbe(pg__net *n, int peer, int tag, int *found, size_t *bytes,
                          pg__net_msg **msg) {
    MPI_Status status;
    MPI_Message m;
    *found = 0;
    *bytes = 0;
    int rc = MPI_Improbe(peer, tag, n->comm, found, &m, &status);
    if (rc != MPI_SUCCESS) {
        *found = 0;
        return mpi_error(rc, "MPI_Improbe");
    }
    if (!*found)
        return PG_OK;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    *bytes = (size_t)count;
    pg__net_msg *out = pg__malloc(sizeof *out);
    if (!out) { /* the message must still be received: into nothing, then report */
        MPI_Mrecv(NULL, 0, MPI_BYTE, &m, MPI_STATUS_IGNORE);
        *found = 0;
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    out->m = m;
    *msg = out;
    return PG_OK;
}

pg_status pg__net_imrecv(pg__net_msg *msg, void *buf, size_t bytes, pg__net_req **out) {
    pg__net_req *r = pg__malloc(sizeof *r);
    if (!r) {
        MPI_Mrecv(NULL, 0, MPI_BYTE, &msg->m, MPI_STATUS_IGNORE);
        pg__free(msg);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    int rc = MPI_Imrecv(buf, (int)bytes, MPI_BYTE, &msg->m, &r->r);
    pg__free(msg);
    if (rc != MPI_SUCCESS) {
        pg__free(r);
        return mpi_error(rc, "MPI_Imrecv");
    }
    *out = r;
    return PG_OK;
}

void pg__net_cancel(pg__net_req *r) {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) {
        MPI_Cancel(&r->r);
        MPI_Wait(&r->r, MPI_STATUS_IGNORE);
    }
    pg__free(r);
}

int pg__net_usable(void) {
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&fin);
    return inited && !fin;
}

void pg__net_abort(int code) {
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&fin);
    if (inited && !fin)
        MPI_Abort(MPI_COMM_WORLD, code);
    _exit(code); /* MPI is gone: this process at least */
}

int pg__net_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}
