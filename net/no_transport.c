/* no_transport.c: the transport of a build without MPI — single-process polygpu only. */
#include "net/transport.h"
#include "base/error.h"

int pg__net_available(void) {
    return 0;
}

pg_status pg__net_open(pg__net **out, int *rank, int *size) {
    (void)out;
    (void)rank;
    (void)size;
    return pg__error(PG_ERROR_UNSUPPORTED,
                     "this polygpu was built without MPI: install libopenmpi-dev (or another MPI) "
                     "and rebuild to run on several ranks");
}

void pg__net_close(pg__net *n) {
    (void)n;
}

int pg__net_tag_max(const pg__net *n) {
    (void)n;
    return 0;
}

pg_status pg__net_isend(pg__net *n, const void *buf, size_t bytes, int peer, int tag,
                        pg__net_req **out) {
    (void)n, (void)buf, (void)bytes, (void)peer, (void)tag, (void)out;
    return pg__error(PG_ERROR_UNSUPPORTED, "no transport (built without MPI)");
}

pg_status pg__net_irecv(pg__net *n, void *buf, size_t bytes, int peer, int tag, pg__net_req **out) {
    (void)n, (void)buf, (void)bytes, (void)peer, (void)tag, (void)out;
    return pg__error(PG_ERROR_UNSUPPORTED, "no transport (built without MPI)");
}

pg_status pg__net_test(pg__net_req *r, int *done) {
    (void)r;
    *done = 1;
    return PG_OK;
}

int pg__net_cuda_aware(void) {
    return 0;
}

pg_status pg__net_improbe(pg__net *n, int peer, int tag, int *found, size_t *bytes,
                          pg__net_msg **msg) {
    (void)n, (void)peer, (void)tag, (void)msg;
    *found = 0;
    *bytes = 0;
    return pg__error(PG_ERROR_UNSUPPORTED, "no transport (built without MPI)");
}

pg_status pg__net_imrecv(pg__net_msg *msg, void *buf, size_t bytes, pg__net_req **out) {
    (void)msg, (void)buf, (void)bytes, (void)out;
    return pg__error(PG_ERROR_UNSUPPORTED, "no transport (built without MPI)");
}

void pg__net_cancel(pg__net_req *r) {
    (void)r;
}

void pg__net_abort(int code) {
    (void)code;
}

int pg__net_usable(void) {
    return 0;
}
