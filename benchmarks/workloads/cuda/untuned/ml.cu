/* ml.cu: the ML baseline, hand-written CUDA C. Partition p's rows stay on GPU p % N (made there,
 * as in every version); the model parameters are made on every GPU.
 *
 * Per partition, two streams: the Ridge stream computes the column statistics and copies them
 * (peer copy) to GPU 0, records "stats done"; GPU 0's main stream waits for them in order,
 * combines, finalizes and copies mean and 1/std to the other GPUs, records "normalised";
 * the Ridge stream waits for it, normalises, projects and applies the softmax, records "ridge
 * done". The Naive Bayes stream runs its five kernels meanwhile, waits for "ridge done" and
 * takes the argmax; the labels go to pinned host memory. --sync: one GPU, synchronous copies,
 * a device synchronisation after each kernel. */
#include "../common.h"

#include "../../kernels/ml.cu"

static const int CLASSES = 16; /* as workloads/ml.py */

struct part_buffers {
    int gpu;
    long long row0;
    int rows;
    int *x;                /* device, resident */
    double *psum, *psumsq; /* device: this partition's statistics */
    double *ssum, *ssumsq; /* GPU 0: their staging copies */
    float *z, *r1, *r2, *amax, *lse;
    int *label, *hlabel; /* device, pinned host */
    cudaStream_t srr, snb;
    cudaEvent_t stats_done, ridge_done;
};

struct gpu_buffers {
    float *logp, *prior, *coef, *icpt, *mean, *istd;
};

/* offset + scale * u with the seeds of workloads/ml.py */
static float *make_param(int n, unsigned seed, float scale, float offset) {
    float *w;
    CK(cudaMalloc(&w, n * sizeof(float)));
    ml_init_param<<<grid_1d(n), BLOCK>>>(w, n, seed, scale, offset);
    CK_LAUNCH();
    return w;
}

int main(int argc, char **argv) {
    pgb_args a = pgb_parse(argc, argv, "ml");
    const int f = a.f, c = CLASSES, n = (int)a.n;
    std::vector<pgb_part> parts = pgb_partitions(a.n, a.partitions);
    std::vector<part_buffers> pb(parts.size());
    std::vector<gpu_buffers> gb(a.gpus);
    pgb_enable_peers(a.gpus);

    for (int g = 0; g < a.gpus; g++) {
        CK(cudaSetDevice(g));
        gb[g].logp = make_param(c * f, 10, -4.0f, 0.0f);
        gb[g].prior = make_param(c, 11, -1.0f, 0.0f);
        gb[g].coef = make_param(c * f, 12, 1.0f / 16, -1.0f / 32);
        gb[g].icpt = make_param(c, 13, 1.0f, -0.5f);
        CK(cudaMalloc(&gb[g].mean, f * sizeof(float)));
        CK(cudaMalloc(&gb[g].istd, f * sizeof(float)));
    }
    CK(cudaSetDevice(0));
    double *tsum, *tsumsq;
    CK(cudaMalloc(&tsum, f * sizeof(double)));
    CK(cudaMalloc(&tsumsq, f * sizeof(double)));
    cudaStream_t main_stream;
    cudaEvent_t normalised;
    CK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&normalised, cudaEventDisableTiming));
    for (size_t i = 0; i < parts.size(); i++) {
        part_buffers &pt = pb[i];
        pt.row0 = parts[i].offset;
        pt.rows = (int)parts[i].count;
        size_t cells = (size_t)pt.rows * f, scores = (size_t)pt.rows * c;
        CK(cudaSetDevice(0));
        CK(cudaMalloc(&pt.ssum, f * sizeof(double)));
        CK(cudaMalloc(&pt.ssumsq, f * sizeof(double)));
        pt.gpu = (int)(i % a.gpus);
        CK(cudaSetDevice(pt.gpu));
        CK(cudaMalloc(&pt.x, cells * sizeof(int)));
        CK(cudaMalloc(&pt.psum, f * sizeof(double)));
        CK(cudaMalloc(&pt.psumsq, f * sizeof(double)));
        CK(cudaMalloc(&pt.z, cells * sizeof(float)));
        CK(cudaMalloc(&pt.r1, scores * sizeof(float)));
        CK(cudaMalloc(&pt.r2, scores * sizeof(float)));
        CK(cudaMalloc(&pt.amax, pt.rows * sizeof(float)));
        CK(cudaMalloc(&pt.lse, pt.rows * sizeof(float)));
        CK(cudaMalloc(&pt.label, pt.rows * sizeof(int)));
        CK(cudaMallocHost(&pt.hlabel, pt.rows * sizeof(int)));
        CK(cudaStreamCreateWithFlags(&pt.srr, cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&pt.snb, cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&pt.stats_done, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&pt.ridge_done, cudaEventDisableTiming));
        ml_init_x<<<grid_1d((long long)cells), BLOCK>>>(pt.x, pt.row0, pt.rows, f);
        CK_LAUNCH();
    }
    pgb_sync_all(a.gpus);

    auto run_async = [&]() {
        /* Ridge: statistics per partition, to GPU 0. */
        for (part_buffers &pt : pb) {
            int chunk;
            dim3 grid = stats_geometry(pt.rows, f, &chunk);
            CK(cudaSetDevice(pt.gpu));
            ml_zero_stats<<<grid_1d(f), BLOCK, 0, pt.srr>>>(pt.psum, pt.psumsq, f);
            CK_LAUNCH();
            ml_rr_stats<<<grid, BLOCK, 0, pt.srr>>>(pt.psum, pt.psumsq, pt.x, pt.rows, f, chunk);
            CK_LAUNCH();
            CK(cudaMemcpyPeerAsync(pt.ssum, 0, pt.psum, pt.gpu, f * sizeof(double), pt.srr));
            CK(cudaMemcpyPeerAsync(pt.ssumsq, 0, pt.psumsq, pt.gpu, f * sizeof(double), pt.srr));
            CK(cudaEventRecord(pt.stats_done, pt.srr));
        }
        /* GPU 0: combine in partition order, finalize, send mean and 1/std everywhere. */
        CK(cudaSetDevice(0));
        for (size_t i = 0; i < pb.size(); i++) {
            CK(cudaStreamWaitEvent(main_stream, pb[i].stats_done, 0));
            ml_rr_combine<<<grid_1d(f), BLOCK, 0, main_stream>>>(tsum, tsumsq, pb[i].ssum,
                                                                 pb[i].ssumsq, f, i == 0);
            CK_LAUNCH();
        }
        ml_rr_finalize<<<grid_1d(f), BLOCK, 0, main_stream>>>(gb[0].mean, gb[0].istd, tsum, tsumsq,
                                                              n, f);
        CK_LAUNCH();
        for (int g = 1; g < a.gpus; g++) {
            CK(cudaMemcpyPeerAsync(gb[g].mean, g, gb[0].mean, 0, f * sizeof(float), main_stream));
            CK(cudaMemcpyPeerAsync(gb[g].istd, g, gb[0].istd, 0, f * sizeof(float), main_stream));
        }
        CK(cudaEventRecord(normalised, main_stream));
        /* Ridge: normalise, project, softmax. */
        for (part_buffers &pt : pb) {
            gpu_buffers &g = gb[pt.gpu];
            long long cells = (long long)pt.rows * f, scores = (long long)pt.rows * c;
            CK(cudaSetDevice(pt.gpu));
            CK(cudaStreamWaitEvent(pt.srr, normalised, 0));
            ml_rr_normalize<<<grid_1d(cells), BLOCK, 0, pt.srr>>>(pt.z, pt.x, g.mean, g.istd,
                                                                  pt.rows, f);
            CK_LAUNCH();
            ml_rr_project<<<grid_1d(scores), BLOCK, 0, pt.srr>>>(pt.r2, pt.z, g.coef, g.icpt,
                                                                 pt.rows, f, c);
            CK_LAUNCH();
            ml_softmax<<<grid_1d(pt.rows), BLOCK, 0, pt.srr>>>(pt.r2, pt.rows, c);
            CK_LAUNCH();
            CK(cudaEventRecord(pt.ridge_done, pt.srr));
        }
        /* Naive Bayes, then the ensemble. */
        for (part_buffers &pt : pb) {
            gpu_buffers &g = gb[pt.gpu];
            long long scores = (long long)pt.rows * c;
            CK(cudaSetDevice(pt.gpu));
            ml_nb_scores<<<grid_1d(scores), BLOCK, 0, pt.snb>>>(pt.r1, pt.x, g.logp, g.prior,
                                                                pt.rows, f, c);
            CK_LAUNCH();
            ml_nb_rowmax<<<grid_1d(pt.rows), BLOCK, 0, pt.snb>>>(pt.amax, pt.r1, pt.rows, c);
            CK_LAUNCH();
            ml_nb_logsumexp<<<grid_1d(pt.rows), BLOCK, 0, pt.snb>>>(pt.lse, pt.r1, pt.amax, pt.rows,
                                                                    c);
            CK_LAUNCH();
            ml_nb_exp<<<grid_1d(scores), BLOCK, 0, pt.snb>>>(pt.r1, pt.lse, pt.rows, c);
            CK_LAUNCH();
            ml_softmax<<<grid_1d(pt.rows), BLOCK, 0, pt.snb>>>(pt.r1, pt.rows, c);
            CK_LAUNCH();
            CK(cudaStreamWaitEvent(pt.snb, pt.ridge_done, 0));
            ml_argmax<<<grid_1d(pt.rows), BLOCK, 0, pt.snb>>>(pt.label, pt.r1, pt.r2, pt.rows, c);
            CK_LAUNCH();
            CK(cudaMemcpyAsync(pt.hlabel, pt.label, pt.rows * sizeof(int), cudaMemcpyDeviceToHost,
                               pt.snb));
        }
        for (part_buffers &pt : pb)
            CK(cudaStreamSynchronize(pt.snb));
    };
    auto run_sync = [&]() {
        CK(cudaSetDevice(0));
        gpu_buffers &g = gb[0];
#define SYNC_AFTER()                                                                               \
    do {                                                                                           \
        CK_LAUNCH();                                                                               \
        CK(cudaDeviceSynchronize());                                                               \
    } while (0)
        for (size_t i = 0; i < pb.size(); i++) {
            part_buffers &pt = pb[i];
            int chunk;
            dim3 grid = stats_geometry(pt.rows, f, &chunk);
            ml_zero_stats<<<grid_1d(f), BLOCK>>>(pt.psum, pt.psumsq, f);
            SYNC_AFTER();
            ml_rr_stats<<<grid, BLOCK>>>(pt.psum, pt.psumsq, pt.x, pt.rows, f, chunk);
            SYNC_AFTER();
        }
        for (size_t i = 0; i < pb.size(); i++) {
            ml_rr_combine<<<grid_1d(f), BLOCK>>>(tsum, tsumsq, pb[i].psum, pb[i].psumsq, f, i == 0);
            SYNC_AFTER();
        }
        ml_rr_finalize<<<grid_1d(f), BLOCK>>>(g.mean, g.istd, tsum, tsumsq, n, f);
        SYNC_AFTER();
        for (part_buffers &pt : pb) {
            long long cells = (long long)pt.rows * f, scores = (long long)pt.rows * c;
            ml_rr_normalize<<<grid_1d(cells), BLOCK>>>(pt.z, pt.x, g.mean, g.istd, pt.rows, f);
            SYNC_AFTER();
            ml_rr_project<<<grid_1d(scores), BLOCK>>>(pt.r2, pt.z, g.coef, g.icpt, pt.rows, f, c);
            SYNC_AFTER();
        }
        for (part_buffers &pt : pb) {
            long long scores = (long long)pt.rows * c;
            ml_nb_scores<<<grid_1d(scores), BLOCK>>>(pt.r1, pt.x, g.logp, g.prior, pt.rows, f, c);
            SYNC_AFTER();
            ml_nb_rowmax<<<grid_1d(pt.rows), BLOCK>>>(pt.amax, pt.r1, pt.rows, c);
            SYNC_AFTER();
            ml_nb_logsumexp<<<grid_1d(pt.rows), BLOCK>>>(pt.lse, pt.r1, pt.amax, pt.rows, c);
            SYNC_AFTER();
            ml_nb_exp<<<grid_1d(scores), BLOCK>>>(pt.r1, pt.lse, pt.rows, c);
            SYNC_AFTER();
        }
        for (part_buffers &pt : pb) {
            ml_softmax<<<grid_1d(pt.rows), BLOCK>>>(pt.r2, pt.rows, c);
            SYNC_AFTER();
            ml_softmax<<<grid_1d(pt.rows), BLOCK>>>(pt.r1, pt.rows, c);
            SYNC_AFTER();
            ml_argmax<<<grid_1d(pt.rows), BLOCK>>>(pt.label, pt.r1, pt.r2, pt.rows, c);
            SYNC_AFTER();
            CK(cudaMemcpy(pt.hlabel, pt.label, pt.rows * sizeof(int), cudaMemcpyDeviceToHost));
        }
#undef SYNC_AFTER
    };
    std::vector<double> t = a.sync ? pgb_time_runs(a, run_sync) : pgb_time_runs(a, run_async);

    long long s = parts[0].count;
    pgb_write_sample(a, a.n, [&](long long i) { return (double)pb[i / s].hlabel[i % s]; });
    pgb_print_json("ml", a, t);
    for (part_buffers &pt : pb) {
        CK(cudaSetDevice(0));
        CK(cudaFree(pt.ssum));
        CK(cudaFree(pt.ssumsq));
        CK(cudaSetDevice(pt.gpu));
        for (void *d :
             {(void *)pt.x, (void *)pt.psum, (void *)pt.psumsq, (void *)pt.z, (void *)pt.r1,
              (void *)pt.r2, (void *)pt.amax, (void *)pt.lse, (void *)pt.label})
            CK(cudaFree(d));
        CK(cudaFreeHost(pt.hlabel));
        CK(cudaStreamDestroy(pt.srr));
        CK(cudaStreamDestroy(pt.snb));
        CK(cudaEventDestroy(pt.stats_done));
        CK(cudaEventDestroy(pt.ridge_done));
    }
    for (int g = 0; g < a.gpus; g++) {
        CK(cudaSetDevice(g));
        for (float *d : {gb[g].logp, gb[g].prior, gb[g].coef, gb[g].icpt, gb[g].mean, gb[g].istd})
            CK(cudaFree(d));
    }
    CK(cudaSetDevice(0));
    CK(cudaFree(tsum));
    CK(cudaFree(tsumsq));
    CK(cudaStreamDestroy(main_stream));
    CK(cudaEventDestroy(normalised));
    return 0;
}
