/* interconnect.h: the bandwidth/latency matrix between locations (0 host, d + 1 device d),
 * its CSV file format, and defaults. */
#ifndef PG_INTERCONNECT_H
#define PG_INTERCONNECT_H

#include "polygpu.h"

#define PG__NLOC (PG_MAX_DEVICES + 1)

typedef struct pg__interconnect {
    int nloc;                       /* ndevices + 1 */
    double bw[PG__NLOC * PG__NLOC]; /* GB/s, [src * nloc + dst]; diagonal: local (huge) */
    double lat_us[PG__NLOC * PG__NLOC];
} pg__interconnect;

/* The matrix as policies see it: links whose measured bandwidths lie within `tol` (relative)
 * of each other get their mean, so that links of the same hardware, measured a few percent
 * apart, compare equal; the diagonal is copied. out: nloc * nloc values. */
void pg__interconnect_equalize(const pg__interconnect *m, double tol, double *out);

/* Uniform matrix: host<->device at host_gbps, device<->device at peer_gbps. */
void pg__interconnect_default(pg__interconnect *m, int ndevices, double host_gbps,
                              double peer_gbps);
/* Load a CSV file (format in interconnect.c). Links the file does not name keep the values m
 * already has. Errors name the file and line. */
pg_status pg__interconnect_load(pg__interconnect *m, const char *path);
pg_status pg__interconnect_save(const pg__interconnect *m, const char *path);
double pg__interconnect_bw(const pg__interconnect *m, int src_loc, int dst_loc);

#endif
