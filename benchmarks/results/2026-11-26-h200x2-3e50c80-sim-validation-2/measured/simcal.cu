// simcal.cu: calibration measurements for the simulator (devices/sim) on the real GPUs:
// copy sharing (FIFO or fair, H2D/D2H at once, two GPUs' host links at once), kernel timing as
// polygpu's profile records it vs pipelined, kernel concurrency, a CG iteration as a CUDA graph.
#include "cg.cu"
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <chrono>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1);} } while (0)
static double wall_us() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
static int ndev;
static void sync_all() { for (int d = 0; d < ndev; d++) { CK(cudaSetDevice(d)); CK(cudaDeviceSynchronize()); } }

int main() {
    CK(cudaGetDeviceCount(&ndev));
    printf("devices %d\n", ndev);
    const size_t B = 128u << 20; // bytes per copy
    const int NB = 8;
    std::vector<void*> h(NB), d0(NB), d1(NB);
    for (int i = 0; i < NB; i++) { CK(cudaMallocHost(&h[i], B)); memset(h[i], 1, B); }
    CK(cudaSetDevice(0)); for (int i = 0; i < NB; i++) CK(cudaMalloc(&d0[i], B));
    if (ndev > 1) { CK(cudaSetDevice(1)); for (int i = 0; i < NB; i++) CK(cudaMalloc(&d1[i], B)); }
    cudaStream_t s0[8], s1[8];
    CK(cudaSetDevice(0)); for (int i = 0; i < 8; i++) CK(cudaStreamCreateWithFlags(&s0[i], cudaStreamNonBlocking));
    if (ndev > 1) { CK(cudaSetDevice(1)); for (int i = 0; i < 8; i++) CK(cudaStreamCreateWithFlags(&s1[i], cudaStreamNonBlocking)); }
    // ---- copies. Each case: ops (dev, dir) issued at once; per-op end (wall, via events on a start event per device) and total.
    struct Op { int dev, dir; }; // dir 0: H2D, 1: D2H
    auto run_case = [&](const char *name, std::vector<Op> ops, int reps) {
        std::vector<std::vector<double>> ends(ops.size());
        std::vector<double> tot;
        for (int r = 0; r < reps + 1; r++) {
            sync_all();
            cudaEvent_t st[2], en[16];
            for (int d = 0; d < ndev && d < 2; d++) { CK(cudaSetDevice(d)); CK(cudaEventCreate(&st[d])); CK(cudaEventRecord(st[d], d ? s1[7] : s0[7])); }
            double t0 = wall_us();
            int k0 = 0, k1 = 0;
            for (size_t i = 0; i < ops.size(); i++) {
                int d = ops[i].dev; CK(cudaSetDevice(d));
                cudaStream_t s = d ? s1[k1++] : s0[k0++];
                CK(cudaStreamWaitEvent(s, st[d], 0));
                void *dp = d ? d1[i] : d0[i];
                if (ops[i].dir == 0) CK(cudaMemcpyAsync(dp, h[i], B, cudaMemcpyHostToDevice, s));
                else CK(cudaMemcpyAsync(h[i], dp, B, cudaMemcpyDeviceToHost, s));
                CK(cudaEventCreate(&en[i])); CK(cudaEventRecord(en[i], s));
            }
            sync_all();
            double t1 = wall_us();
            if (r == 0) continue;
            tot.push_back(t1 - t0);
            for (size_t i = 0; i < ops.size(); i++) { float ms; CK(cudaSetDevice(ops[i].dev)); CK(cudaEventElapsedTime(&ms, st[ops[i].dev], en[i])); ends[i].push_back(ms * 1e3); }
        }
        printf("copy %-28s total %8.1f us (%.1f GB/s all)  ends:", name, med(tot), ops.size() * (double)B / med(tot) / 1e3);
        for (size_t i = 0; i < ops.size(); i++) printf(" %s%d %.0f", ops[i].dir ? "D2H" : "H2D", ops[i].dev, med(ends[i]));
        printf("\n");
    };
    run_case("H2D0", {{0,0}}, 5);
    run_case("D2H0", {{0,1}}, 5);
    run_case("4xH2D0 (fifo or fair?)", {{0,0},{0,0},{0,0},{0,0}}, 5);
    run_case("4xD2H0", {{0,1},{0,1},{0,1},{0,1}}, 5);
    run_case("H2D0+D2H0", {{0,0},{0,1}}, 5);
    run_case("2xH2D0+2xD2H0", {{0,0},{0,1},{0,0},{0,1}}, 5);
    if (ndev > 1) {
        run_case("H2D0+H2D1", {{0,0},{1,0}}, 5);
        run_case("D2H0+D2H1", {{0,1},{1,1}}, 5);
        run_case("H2D0+D2H0+H2D1+D2H1", {{0,0},{0,1},{1,0},{1,1}}, 5);
        run_case("2x(H2D0+D2H0+H2D1+D2H1)", {{0,0},{0,1},{1,0},{1,1},{0,0},{0,1},{1,0},{1,1}}, 5);
    }
    // device memory bandwidth: a d2d copy within GPU 0
    {
        CK(cudaSetDevice(0)); std::vector<double> t; cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
        for (int r = 0; r < 6; r++) { CK(cudaEventRecord(a, s0[0])); for (int i = 0; i < 4; i++) CK(cudaMemcpyAsync(d0[i], d0[i + 4], B, cudaMemcpyDeviceToDevice, s0[0])); CK(cudaEventRecord(b, s0[0])); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (r) t.push_back(ms * 1e3); }
        printf("d2d within GPU0: 4 x %zu MB in %.1f us: %.0f GB/s read+write\n", B >> 20, med(t), 8.0 * B / med(t) / 1e3);
    }
    // ---- kernels on GPU 0, CG medium geometry: n = 16384, 16 partitions of 1024 rows
    CK(cudaSetDevice(0));
    const int n = 16384, P = 16, rows = 1024, chunk = 128;
    dim3 mgrid(4, 128), blk(256);
    std::vector<float*> A(P), Y(P);
    float *p, *y, *x, *r, *sc;
    for (int i = 0; i < P; i++) { CK(cudaMalloc(&A[i], (size_t)rows * n * 4)); CK(cudaMalloc(&Y[i], rows * 4)); cg_init_matrix<<<65535, 256>>>(A[i], i * rows, rows, n, 100.f); }
    CK(cudaMalloc(&p, n * 4)); CK(cudaMalloc(&y, n * 4)); CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&r, n * 4)); CK(cudaMalloc(&sc, 64));
    cg_init_b<<<64, 256>>>(p, n); cg_init_b<<<64, 256>>>(r, n); CK(cudaMemset(sc, 0, 64)); CK(cudaMemset(x, 0, n * 4));
    CK(cudaDeviceSynchronize());
    cudaStream_t ks[P]; for (int i = 0; i < P; i++) CK(cudaStreamCreateWithFlags(&ks[i], cudaStreamNonBlocking));
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    auto launch = [&](int kind, int i, cudaStream_t s) {
        switch (kind) {
        case 0: linalg_zero<<<4, 256, 0, s>>>(Y[i], rows); break;
        case 1: linalg_matvec<<<mgrid, blk, 0, s>>>(Y[i], A[i], p, rows, n, chunk); break;
        case 2: cg_gather<<<4, 256, 0, s>>>(y, Y[i], i * rows, rows); break;
        case 3: cg_dot<<<4, 256, 0, s>>>(sc, p, y, n, 1); break;
        case 4: cg_update_xr<<<4, 256, 0, s>>>(x, r, sc, p, y, n); break;
        case 5: cg_update_p<<<64, 256, 0, s>>>(p, r, sc, n); break;
        case 6: cg_rotate<<<1, 32, 0, s>>>(sc); break;
        }
    };
    const char *kname[] = {"linalg_zero", "linalg_matvec", "cg_gather", "cg_dot", "cg_update_xr", "cg_update_p", "cg_rotate"};
    for (int kind = 0; kind < 7; kind++) {
        // as the profile records it: event, launch, event on an idle stream, waited for
        std::vector<double> t;
        for (int rep = 0; rep < 31; rep++) { CK(cudaDeviceSynchronize()); CK(cudaEventRecord(a, ks[0])); launch(kind, rep % P, ks[0]); CK(cudaEventRecord(b, ks[0])); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (rep) t.push_back(ms * 1e3); }
        // pipelined: 64 launches back to back on one stream (host may bound tiny ones)
        CK(cudaDeviceSynchronize()); CK(cudaEventRecord(a, ks[0])); for (int i = 0; i < 64; i++) launch(kind, i % P, ks[0]); CK(cudaEventRecord(b, ks[0])); CK(cudaEventSynchronize(b)); float ms1; CK(cudaEventElapsedTime(&ms1, a, b));
        // a CUDA graph chain of 64 (device-side per node)
        cudaGraph_t g; cudaGraphExec_t ge; CK(cudaStreamBeginCapture(ks[1], cudaStreamCaptureModeGlobal)); for (int i = 0; i < 64; i++) launch(kind, i % P, ks[1]); CK(cudaStreamEndCapture(ks[1], &g)); CK(cudaGraphInstantiate(&ge, g, 0));
        CK(cudaGraphLaunch(ge, ks[1])); CK(cudaStreamSynchronize(ks[1]));
        std::vector<double> tg; for (int rep = 0; rep < 5; rep++) { CK(cudaEventRecord(a, ks[1])); CK(cudaGraphLaunch(ge, ks[1])); CK(cudaEventRecord(b, ks[1])); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); tg.push_back(ms * 1e3 / 64); }
        CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
        printf("kernel %-14s profile-style median %.2f us min %.2f | stream back-to-back %.2f us each | graph chain %.2f us per node\n", kname[kind], med(t), *std::min_element(t.begin(), t.end()), ms1 * 1e3 / 64, med(tg));
    }
    // concurrency: 16 matvecs on one stream vs 16 streams; 16 zero+matvec pairs
    for (int variant = 0; variant < 4; variant++) {
        std::vector<double> t;
        for (int rep = 0; rep < 6; rep++) {
            CK(cudaDeviceSynchronize()); CK(cudaEventRecord(a, ks[0]));
            for (int i = 1; i < P; i++) CK(cudaStreamWaitEvent(ks[i], a, 0));
            for (int i = 0; i < P; i++) {
                cudaStream_t s = variant == 0 || variant == 2 ? ks[0] : ks[i];
                if (variant >= 2) launch(0, i, s);
                launch(1, i, s);
            }
            for (int i = 1; i < P; i++) { cudaEvent_t e; CK(cudaEventCreate(&e)); CK(cudaEventRecord(e, ks[i])); CK(cudaStreamWaitEvent(ks[0], e, 0)); }
            CK(cudaEventRecord(b, ks[0])); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (rep) t.push_back(ms * 1e3);
        }
        const char *vn[] = {"16 matvec, 1 stream", "16 matvec, 16 streams", "16 zero+matvec, 1 stream", "16 zero+matvec, 16 streams"};
        printf("concurrency %-28s %.1f us (%.0f GB/s of matrix)\n", vn[variant], med(t), (double)P * rows * n * 4 / med(t) / 1e3);
    }
    // one CG iteration as polygpu's plan has it (zero_i -> matvec_i on stream i, gathers in order
    // after each matvec, then dot, update_xr, update_p, rotate), captured as one graph
    {
        cudaGraph_t g; cudaGraphExec_t ge; cudaEvent_t fork, join[P];
        CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming)); for (int i = 0; i < P; i++) CK(cudaEventCreateWithFlags(&join[i], cudaEventDisableTiming));
        CK(cudaStreamBeginCapture(ks[0], cudaStreamCaptureModeGlobal)); CK(cudaEventRecord(fork, ks[0]));
        for (int i = 1; i < P; i++) CK(cudaStreamWaitEvent(ks[i], fork, 0));
        for (int i = 0; i < P; i++) { launch(0, i, ks[i]); launch(1, i, ks[i]); CK(cudaEventRecord(join[i], ks[i])); }
        for (int i = 0; i < P; i++) { CK(cudaStreamWaitEvent(ks[0], join[i], 0)); launch(2, i, ks[0]); }
        for (int k = 3; k < 7; k++) launch(k, 0, ks[0]);
        CK(cudaStreamEndCapture(ks[0], &g)); CK(cudaGraphInstantiate(&ge, g, 0));
        CK(cudaGraphLaunch(ge, ks[0])); CK(cudaStreamSynchronize(ks[0]));
        std::vector<double> t;
        for (int rep = 0; rep < 5; rep++) { CK(cudaEventRecord(a, ks[0])); for (int it = 0; it < 25; it++) CK(cudaGraphLaunch(ge, ks[0])); CK(cudaEventRecord(b, ks[0])); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms * 1e3 / 25); }
        double w0 = wall_us(); CK(cudaGraphLaunch(ge, ks[0])); double w1 = wall_us(); CK(cudaStreamSynchronize(ks[0]));
        printf("cg iteration graph (52 nodes, 1 GPU): %.1f us per iteration; host cudaGraphLaunch %.1f us\n", med(t), w1 - w0);
    }
    CK(cudaGetLastError());
    printf("ok\n");
    return 0;
}
