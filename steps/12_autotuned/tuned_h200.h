/* Step 12's configurations, written by make tune (steps/12_autotuned/tune.sh); not edited by hand.
 * Device: NVIDIA H200, 9.0; 2026-11-29; 77 candidates timed, 4 min 31 s.
 * Each: block BM, BN, BK, warp WM, WN, thread TM, TN, pipeline depth, blocks per SM; GFLOP/s at
 * the class's shape (median of 5 after 2 warm-up) and cuBLAS SGEMM's in the same run. */
#define TUNED_SQUARE 256, 128, 16, 64, 64, 16, 8, 2, 1 /* 4096x4096x4096: 48944 GFLOP/s, cuBLAS 51356, 0.953 */
#define TUNED_TALL 256, 128, 16, 64, 64, 16, 8, 2, 1 /* 8192x1024x4096: 48772 GFLOP/s, cuBLAS 51479, 0.947 */
#define TUNED_WIDE 256, 128, 16, 64, 64, 16, 8, 2, 1 /* 1024x8192x4096: 48833 GFLOP/s, cuBLAS 50923, 0.959 */
#define TUNED_SHORT_K 128, 128, 16, 32, 64, 8, 8, 2, 2 /* 4096x4096x256: 44013 GFLOP/s, cuBLAS 45146, 0.975 */
#define TUNED_SMALL 128, 64, 32, 16, 64, 4, 8, 2, 2 /* 1024x1024x1024: 36452 GFLOP/s, cuBLAS 37221, 0.979 */
#define TUNED_UNALIGNED 128, 128, 16, 64, 32, 8, 8, 2, 2 /* 4095x4095x4095: 44632 GFLOP/s, cuBLAS 48477, 0.921 */
