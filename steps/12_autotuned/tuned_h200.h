/* Step 12's configurations, written by make tune (steps/12_autotuned/tune.sh); not edited by hand.
 * Device: NVIDIA H200, 9.0; 2026-11-29; 95 candidates timed, 6 min 5 s.
 * Each: block BM, BN, BK, warp WM, WN, thread TM, TN, pipeline depth, blocks per SM; GFLOP/s at
 * the class's shape (median of 5 after 2 warm-up) and cuBLAS SGEMM's in the same run.
 * (ORDER 0, ISSUE -1 appended when those parameters were added: the kernel these numbers measured.) */
#define TUNED_SQUARE 256, 128, 16, 128, 32, 16, 8, 4, 1, 0, -1 /* 4096x4096x4096: 49194 GFLOP/s, cuBLAS 51401, 0.957 */
#define TUNED_TALL 256, 128, 16, 128, 32, 16, 8, 4, 1, 0, -1 /* 8192x1024x4096: 49008 GFLOP/s, cuBLAS 51466, 0.952 */
#define TUNED_WIDE 256, 128, 16, 128, 32, 16, 8, 4, 1, 0, -1 /* 1024x8192x4096: 49131 GFLOP/s, cuBLAS 50870, 0.966 */
#define TUNED_SHORT_K 128, 128, 16, 64, 32, 8, 8, 4, 2, 0, -1 /* 4096x4096x256: 44657 GFLOP/s, cuBLAS 45153, 0.989 */
#define TUNED_SMALL 128, 64, 32, 16, 64, 4, 8, 4, 2, 0, -1 /* 1024x1024x1024: 36611 GFLOP/s, cuBLAS 37138, 0.986 */
#define TUNED_UNALIGNED 128, 128, 16, 64, 32, 8, 8, 2, 2, 0, -1 /* 4095x4095x4095: 44638 GFLOP/s, cuBLAS 48523, 0.920 */
