/* ml.cu: the ML baseline, hand-written CUDA C, tuned. Partitions are placed contiguously (rows
 * made there, as in every version); the model parameters are made on every GPU. Each GPU has
 * PAIRS (3) Ridge streams and as many Naive Bayes streams, and one stream for its statistics
 * (7 streams: within CUDA's 8 hardware queues).
 *
 * Ridge: the GPU's statistics stream zeroes one pair of column sums (event); each partition's
 * Ridge stream waits for it and adds its rows into that pair (ml_rr_stats adds with atomics), so
 * each GPU reduces its partitions in place; the statistics stream joins them and sends the pair
 * to GPU 0 (one peer copy each); GPU 0's main stream combines one pair per GPU, finalizes, copies
 * mean and 1/std to the other GPUs and records "normalised"; the Ridge streams wait for it,
 * normalise, project and apply the softmax, record "ridge done". The Naive Bayes streams run
 * their five kernels meanwhile, wait for "ridge done" and take the argmax; the labels go to
 * pinned host memory. --sync: one GPU, synchronous copies, a device synchronisation after each
 * kernel. The first version (a combine per partition on GPU 0) is untuned/ml.cu. */
#include "common.h"

#include "../kernels/ml.cu"

static const int CLASSES = 16; /* as workloads/ml.py */
static const int PAIRS = 3;    /* Ridge + Naive Bayes stream pairs per GPU */

struct part_buffers {
    int gpu, stream;
    long long row0;
    int rows;
    int *x;                /* device, resident */
    double *psum, *psumsq; /* --sync only: this partition's statistics */
    float *z, *r1, *r2, *amax, *lse;
    int *label, *hlabel; /* device, pinned host */
    cudaEvent_t stats_done, ridge_done;
};

struct gpu_buffers {
    float *logp, *prior, *coef, *icpt, *mean, *istd;
    double *gsum, *gsumsq; /* this GPU's column statistics */
    double *ssum, *ssumsq; /* GPU 0: their staging copies (GPU 0's own: gsum itself) */
    cudaStream_t stats, srr[PAIRS], snb[PAIRS];
    cudaEvent_t zeroed, stats_done;
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
        CK(cudaMalloc(&gb[g].gsum, f * sizeof(double)));
        CK(cudaMalloc(&gb[g].gsumsq, f * sizeof(double)));
        CK(cudaStreamCreateWithFlags(&gb[g].stats, cudaStreamNonBlocking));
        for (int k = 0; k < PAIRS; k++) {
            CK(cudaStreamCreateWithFlags(&gb[g].srr[k], cudaStreamNonBlocking));
            CK(cudaStreamCreateWithFlags(&gb[g].snb[k], cudaStreamNonBlocking));
        }
        CK(cudaEventCreateWithFlags(&gb[g].zeroed, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&gb[g].stats_done, cudaEventDisableTiming));
    }
    CK(cudaSetDevice(0));
    for (int g = 0; g < a.gpus; g++) {
        gb[g].ssum = gb[g].gsum, gb[g].ssumsq = gb[g].gsumsq;
        if (g) {
            CK(cudaMalloc(&gb[g].ssum, f * sizeof(double)));
            CK(cudaMalloc(&gb[g].ssumsq, f * sizeof(double)));
        }
    }
    std::vector<int> on_gpu(a.gpus, 0);
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
        pt.gpu = pgb_gpu_of((int)i, (int)parts.size(), a.gpus);
        pt.stream = on_gpu[pt.gpu]++ % PAIRS;
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
        CK(cudaEventCreateWithFlags(&pt.stats_done, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&pt.ridge_done, cudaEventDisableTiming));
        ml_init_x<<<grid_1d((long long)cells), BLOCK>>>(pt.x, pt.row0, pt.rows, f);
        CK_LAUNCH();
    }
    pgb_sync_all(a.gpus);

    auto run_async = [&]() {
        /* Ridge: each GPU zeroes its sums, its partitions add into them, GPU 0 gets one pair. */
        for (int g = 0; g < a.gpus; g++) {
            CK(cudaSetDevice(g));
            ml_zero_stats<<<grid_1d(f), BLOCK, 0, gb[g].stats>>>(gb[g].gsum, gb[g].gsumsq, f);
            CK_LAUNCH();
            CK(cudaEventRecord(gb[g].zeroed, gb[g].stats));
        }
        for (part_buffers &pt : pb) {
            gpu_buffers &g = gb[pt.gpu];
            int chunk;
            dim3 grid = stats_geometry(pt.rows, f, &chunk);
            CK(cudaSetDevice(pt.gpu));
            CK(cudaStreamWaitEvent(g.srr[pt.stream], g.zeroed, 0));
            ml_rr_stats<<<grid, BLOCK, 0, g.srr[pt.stream]>>>(g.gsum, g.gsumsq, pt.x, pt.rows, f,
                                                              chunk);
            CK_LAUNCH();
            CK(cudaEventRecord(pt.stats_done, g.srr[pt.stream]));
            CK(cudaStreamWaitEvent(g.stats, pt.stats_done, 0));
        }
        for (int g = 1; g < a.gpus; g++) {
            CK(cudaSetDevice(g));
            CK(cudaMemcpyPeerAsync(gb[g].ssum, 0, gb[g].gsum, g, f * sizeof(double), gb[g].stats));
            CK(cudaMemcpyPeerAsync(gb[g].ssumsq, 0, gb[g].gsumsq, g, f * sizeof(double),
                                   gb[g].stats));
        }
        for (int g = 0; g < a.gpus; g++) {
            CK(cudaSetDevice(g));
            CK(cudaEventRecord(gb[g].stats_done, gb[g].stats));
        }
        /* GPU 0: combine one pair per GPU, finalize, send mean and 1/std everywhere. */
        CK(cudaSetDevice(0));
        for (int g = 0; g < a.gpus; g++) {
            CK(cudaStreamWaitEvent(main_stream, gb[g].stats_done, 0));
            ml_rr_combine<<<grid_1d(f), BLOCK, 0, main_stream>>>(tsum, tsumsq, gb[g].ssum,
                                                                 gb[g].ssumsq, f, g == 0);
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
        /* Naive Bayes first in issue order: it needs nothing from the statistics. */
        for (part_buffers &pt : pb) {
            gpu_buffers &g = gb[pt.gpu];
            cudaStream_t s = g.snb[pt.stream];
            long long scores = (long long)pt.rows * c;
            CK(cudaSetDevice(pt.gpu));
            ml_nb_scores<<<grid_1d(scores), BLOCK, 0, s>>>(pt.r1, pt.x, g.logp, g.prior, pt.rows,
                                                          f, c);
            CK_LAUNCH();
            ml_nb_rowmax<<<grid_1d(pt.rows), BLOCK, 0, s>>>(pt.amax, pt.r1, pt.rows, c);
            CK_LAUNCH();
            ml_nb_logsumexp<<<grid_1d(pt.rows), BLOCK, 0, s>>>(pt.lse, pt.r1, pt.amax, pt.rows, c);
            CK_LAUNCH();
            ml_nb_exp<<<grid_1d(scores), BLOCK, 0, s>>>(pt.r1, pt.lse, pt.rows, c);
            CK_LAUNCH();
            ml_softmax<<<grid_1d(pt.rows), BLOCK, 0, s>>>(pt.r1, pt.rows, c);
            CK_LAUNCH();
        }
        /* Ridge: normalise, project, softmax; then the ensemble on the Naive Bayes stream. */
        for (part_buffers &pt : pb) {
            gpu_buffers &g = gb[pt.gpu];
            cudaStream_t s = g.srr[pt.stream];
            long long cells = (long long)pt.rows * f, scores = (long long)pt.rows * c;
            CK(cudaSetDevice(pt.gpu));
            CK(cudaStreamWaitEvent(s, normalised, 0));
            ml_rr_normalize<<<grid_1d(cells), BLOCK, 0, s>>>(pt.z, pt.x, g.mean, g.istd, pt.rows,
                                                             f);
            CK_LAUNCH();
            ml_rr_project<<<grid_1d(scores), BLOCK, 0, s>>>(pt.r2, pt.z, g.coef, g.icpt, pt.rows, f,
                                                            c);
            CK_LAUNCH();
            ml_softmax<<<grid_1d(pt.rows), BLOCK, 0, s>>>(pt.r2, pt.rows, c);
            CK_LAUNCH();
            CK(cudaEventRecord(pt.ridge_done, s));
            cudaStream_t nb = g.snb[pt.stream];
            CK(cudaStreamWaitEvent(nb, pt.ridge_done, 0));
            ml_argmax<<<grid_1d(pt.rows), BLOCK, 0, nb>>>(pt.label, pt.r1, pt.r2, pt.rows, c);
            CK_LAUNCH();
            CK(cudaMemcpyAsync(pt.hlabel, pt.label, pt.rows * sizeof(int), cudaMemcpyDeviceToHost,
                               nb));
        }
        for (int g = 0; g < a.gpus; g++)
            for (cudaStream_t s : gb[g].snb)
                CK(cudaStreamSynchronize(s));
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
        CK(cudaSetDevice(pt.gpu));
        for (void *d :
             {(void *)pt.x, (void *)pt.psum, (void *)pt.psumsq, (void *)pt.z, (void *)pt.r1,
              (void *)pt.r2, (void *)pt.amax, (void *)pt.lse, (void *)pt.label})
            CK(cudaFree(d));
        CK(cudaFreeHost(pt.hlabel));
        CK(cudaEventDestroy(pt.stats_done));
        CK(cudaEventDestroy(pt.ridge_done));
    }
    for (int g = 0; g < a.gpus; g++) {
        CK(cudaSetDevice(g));
        for (float *d : {gb[g].logp, gb[g].prior, gb[g].coef, gb[g].icpt, gb[g].mean, gb[g].istd})
            CK(cudaFree(d));
        CK(cudaFree(gb[g].gsum));
        CK(cudaFree(gb[g].gsumsq));
        CK(cudaStreamDestroy(gb[g].stats));
        for (int k = 0; k < PAIRS; k++) {
            CK(cudaStreamDestroy(gb[g].srr[k]));
            CK(cudaStreamDestroy(gb[g].snb[k]));
        }
        CK(cudaEventDestroy(gb[g].zeroed));
        CK(cudaEventDestroy(gb[g].stats_done));
        if (g) {
            CK(cudaSetDevice(0));
            CK(cudaFree(gb[g].ssum));
            CK(cudaFree(gb[g].ssumsq));
        }
    }
    CK(cudaSetDevice(0));
    CK(cudaFree(tsum));
    CK(cudaFree(tsumsq));
    CK(cudaStreamDestroy(main_stream));
    CK(cudaEventDestroy(normalised));
    return 0;
}
