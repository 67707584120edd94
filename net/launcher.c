/* launcher.c: where this process sits in a distributed run, read from what the launcher put in
 * the environment (OpenMPI, MPICH/Hydra, PMIx, Slurm), before and without any MPI call: the
 * runtime decides from it whether to start MPI at all, and which GPUs are this rank's. */
#include "net/transport.h"

#include <stdlib.h>

static int env_int(const char *const *names, int dflt) {
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) {
            char *end;
            long x = strtol(v, &end, 10);
            if (!*end && x >= 0 && x < (1L << 30))
                return (int)x;
        }
    }
    return dflt;
}

void pg__net_launcher(pg__net_place *out) {
    static const char *const size[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", NULL};
    static const char *const rank[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", NULL};
    static const char *const lsize[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                                        "SLURM_NTASKS_PER_NODE", NULL};
    static const char *const lrank[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                        "SLURM_LOCALID", NULL};
    out->size = env_int(size, 1);
    if (out->size < 1)
        out->size = 1;
    out->rank = env_int(rank, 0);
    out->local_size = env_int(lsize, out->size);
    out->local_rank = env_int(lrank, out->rank);
    if (out->local_size < 1)
        out->local_size = 1;
    if (out->local_rank >= out->local_size)
        out->local_rank %= out->local_size;
}
