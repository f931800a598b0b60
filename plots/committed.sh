# The committed measurements that the README's table, the lessons' tables and the figures in their prose
# are written from (sourced): the GPU steps on the NVIDIA H200, the CPU steps on that machine's host CPU
# (16 cores, OpenBLAS on its own choice of kernels). The README.md in each data folder says how each was measured.
GPU_DATA=plots/data/h200
CPU_DATA=plots/data/intel-xeon-processor-fam6-mod207-avx512-16c
