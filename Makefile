# GEMM, step by step. `make help` lists the targets.
#
# Every step is steps/NN_name/kernel.cu (GPU) or kernel.c (CPU); it builds to
# build/stepNN, linked with the shared harness in common/. New steps are picked
# up from the directory names: nothing here lists them.

BUILD := build
OBJ   := $(BUILD)/obj

# ---------------------------------------------------------------- toolchain
CC    ?= cc
NVCC  ?= nvcc
# Without nvcc (the CUDA toolkit) the CPU steps and the host tests are still built; the targets that
# need it say so in one line.
HAVE_NVCC := $(if $(shell command -v $(NVCC) 2>/dev/null),1,)
NO_NVCC_NOTE := nvcc (the CUDA toolkit) is not on PATH, so the GPU steps and build/peak are not built; install the toolkit (NVIDIA's CUDA downloads page) and put its bin/ on PATH
# Open MPI's compiler wrapper and launcher, for the MPI step (Part III; see "MPI steps" below).
MPICC  ?= mpicc
MPIRUN ?= mpirun
HAVE_MPI := $(if $(shell command -v $(MPICC) 2>/dev/null),1,)

# GPU architecture: ARCH=sm_80 overrides; else the present GPU's; else sm_90.
# The PTX is embedded too, so a newer GPU can still run the build.
ifeq ($(origin ARCH),undefined)
  GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
  ARCH := sm_$(if $(GPU_CC),$(GPU_CC),90)
endif
SM := $(patsubst sm_%,%,$(ARCH))
GENCODE := -gencode arch=compute_$(SM),code=[sm_$(SM),compute_$(SM)]

# OpenBLAS: through pkg-config where it answers (on Debian that names the header of the OpenBLAS in
# use even where another BLAS owns <cblas.h>), else the default paths. tests/deps.sh compiles and links
# a probe with exactly these flags.
BLAS_CFLAGS ?= $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS   ?= $(or $(shell pkg-config --libs openblas 2>/dev/null),-lopenblas)

CFLAGS   ?= -O2
# (an undeclared function is an error, not a warning: built against another BLAS's <cblas.h>, a call to
# openblas_get_config() would otherwise link, return a truncated pointer and crash at run time)
override CFLAGS += -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Werror=implicit-function-declaration -Icommon -MMD -MP
NVFLAGS  ?= -O3
# (g++ warns about members a designated initializer leaves out; C defines them as zero, and the
# step descriptions rely on that, so that one warning is off.)
override NVFLAGS += -std=c++20 $(GENCODE) -Icommon -MMD -MP --Werror all-warnings \
            -Xcompiler -Wall,-Wextra,-Wno-missing-field-initializers
LDFLAGS  ?=
NVLDFLAGS ?=
LDLIBS_GPU := -lcublas -lm
LDLIBS_CPU := $(BLAS_LIBS) -lm

# ---------------------------------------------------------------- sources
HOST_SRC := common/cli.c common/error.c common/matrix.c common/report.c common/timing.c \
            common/verify.c
GPU_SRC  := common/gpu.cu common/gpu_peak.cu common/backend_gpu.cu
CPU_SRC  := common/backend_cpu.c common/reference_cpu.c common/cpu_info.c common/cpu_peak.c

HOST_OBJ := $(HOST_SRC:%.c=$(OBJ)/%.o)
MAIN_OBJ := $(OBJ)/common/main.o
GPU_OBJ  := $(GPU_SRC:%.cu=$(OBJ)/%.o)
CPU_OBJ  := $(CPU_SRC:%.c=$(OBJ)/%.o)
CPU_STEP_OBJS := $(MAIN_OBJ) $(HOST_OBJ) $(CPU_OBJ)  # what a CPU step links besides its kernel
GPU_STEP_OBJS := $(MAIN_OBJ) $(HOST_OBJ) $(GPU_OBJ)  # what a GPU step links besides its kernel

# A step is a directory steps/NN_name with a kernel.cu (GPU) or kernel.c (CPU); anything else there
# (an empty directory left by a copy of an older tree, say) is not one.
# A hybrid step (Part III: TARGET_HYBRID in its kernel.cu) is CPU and GPU code together: it links the
# hybrid backend, the CPU code and step 21 (common/node.h) besides its own .cu files.
HYBRID_STEP_DIRS := $(sort $(patsubst %/kernel.cu,%,$(shell grep -l TARGET_HYBRID /dev/null $(wildcard steps/[0-9][0-9]_*/kernel.cu))))
GPU_STEP_DIRS := $(filter-out $(HYBRID_STEP_DIRS),$(sort $(patsubst %/kernel.cu,%,$(wildcard steps/[0-9][0-9]_*/kernel.cu))))
# An MPI step (Part III: a kernel.c that includes <mpi.h>; tests/lib.sh's step_kind uses the same rule) is
# built with MPICC against the distributed harness and started with mpirun: see "MPI steps" below.
MPI_STEP_DIRS := $(sort $(patsubst %/kernel.c,%,$(shell grep -l '^.include <mpi.h>' /dev/null $(wildcard steps/[0-9][0-9]_*/kernel.c))))
CPU_STEP_DIRS := $(filter-out $(MPI_STEP_DIRS),$(sort $(patsubst %/kernel.c,%,$(wildcard steps/[0-9][0-9]_*/kernel.c))))
STEP_DIRS := $(sort $(GPU_STEP_DIRS) $(CPU_STEP_DIRS) $(HYBRID_STEP_DIRS) $(MPI_STEP_DIRS))
step_num = $(firstword $(subst _, ,$(notdir $(1))))
GPU_BINS := $(foreach d,$(GPU_STEP_DIRS),$(BUILD)/step$(call step_num,$(d))) $(BUILD)/peak $(BUILD)/tc_peak $(BUILD)/bank_bench \
            $(BUILD)/tc_bench $(BUILD)/racecheck_probe
CPU_BINS := $(foreach d,$(CPU_STEP_DIRS),$(BUILD)/step$(call step_num,$(d))) $(BUILD)/cpu_peak
HYBRID_BINS := $(foreach d,$(HYBRID_STEP_DIRS),$(BUILD)/step$(call step_num,$(d)))
MPI_BINS := $(foreach d,$(MPI_STEP_DIRS),$(BUILD)/step$(call step_num,$(d)))
TEST_BINS := $(BUILD)/test_verify $(BUILD)/test_cli $(BUILD)/test_reference $(BUILD)/test_dist
# The step whose tile configurations `make tune` chooses.
TUNED_DIR := $(firstword $(filter %_autotuned,$(GPU_STEP_DIRS)))
TUNED_STEP := $(call step_num,$(TUNED_DIR))

.PHONY: all steps tests test test-full check sanitize tune diff sass regs profile plots docs clean help no-nvcc-note
all: steps tests no-nvcc-note no-mpi-note

steps: $(CPU_BINS) $(if $(HAVE_NVCC),$(GPU_BINS) $(HYBRID_BINS)) $(if $(HAVE_MPI),$(MPI_BINS))
tests: $(TEST_BINS)
no-nvcc-note:
	@$(if $(HAVE_NVCC),:,echo "make: note: $(NO_NVCC_NOTE)")

# `make step07` builds build/step07.
step%: $(BUILD)/step% ;

# ---------------------------------------------------------------- rules
$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(OBJ)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVFLAGS) -c $< -o $@

# The autotuned step reads its tile configurations at build time from a header: TUNED=FILE, else
# build/tuned.h (written by `make tune`), else the committed H200 one; TUNED=none builds with the
# in-source defaults.
# (An empty TUNED, from an environment that sets it to nothing, counts as unset.)
ifeq ($(strip $(TUNED)),)
  override TUNED := $(firstword $(wildcard $(BUILD)/tuned.h $(TUNED_DIR)/tuned_h200.h) none)
endif
TUNED_STAMP := $(OBJ)/tuned.path
# The stamp holds the header's name, so that switching headers rebuilds the step.
$(shell mkdir -p $(OBJ) && { [ "$$(cat $(TUNED_STAMP) 2>/dev/null)" = "$(TUNED)" ] || echo "$(TUNED)" > $(TUNED_STAMP); })
$(OBJ)/$(TUNED_DIR)/kernel.o: $(TUNED_STAMP) $(filter-out none,$(TUNED))
$(OBJ)/$(TUNED_DIR)/kernel.o: override NVFLAGS += $(if $(filter-out none,$(TUNED)),--pre-include $(TUNED))

# Part III calls step 21, the all-cores CPU step, as its node-level routine (common/node.h): the same
# object file, its STEP renamed to NODE_CPU_STEP so that it links beside the caller's own STEP.
NODE_CPU_DIR := $(firstword $(filter %_cpu_threads,$(CPU_STEP_DIRS)))
NODE_CPU_OBJ := $(OBJ)/$(NODE_CPU_DIR)/node.o
$(NODE_CPU_OBJ): $(OBJ)/$(NODE_CPU_DIR)/kernel.o
	objcopy --redefine-sym STEP=NODE_CPU_STEP $< $@

# OpenMP and the BLAS header are the CPU code's business: its objects get them.
CPU_KERNEL_OBJ := $(foreach d,$(CPU_STEP_DIRS),$(OBJ)/$(d)/kernel.o) $(OBJ)/$(firstword $(CPU_STEP_DIRS))/peak.o
$(CPU_KERNEL_OBJ) $(OBJ)/common/backend_cpu.o $(OBJ)/common/cpu_peak.o: override CFLAGS += -O3 -fopenmp
$(OBJ)/common/backend_cpu.o $(OBJ)/common/reference_cpu.o $(OBJ)/tests/test_reference.o: override CFLAGS += $(BLAS_CFLAGS)

ifneq ($(HAVE_NVCC),)
define GPU_STEP_RULE
$(BUILD)/step$(call step_num,$(1)): $(OBJ)/$(1)/kernel.o $(GPU_STEP_OBJS)
	$(NVCC) $(GENCODE) $(NVLDFLAGS) $$^ -o $$@ $(LDLIBS_GPU)
endef
else
define GPU_STEP_RULE
$(BUILD)/step$(call step_num,$(1)):
	@echo "make: $$@ is a GPU step: $(NO_NVCC_NOTE)"; exit 2
endef
endif
define CPU_STEP_RULE
$(BUILD)/step$(call step_num,$(1)): $(OBJ)/$(1)/kernel.o $(CPU_STEP_OBJS)
	$(CC) -fopenmp $(LDFLAGS) $$^ -o $$@ $(LDLIBS_CPU)
endef
ifneq ($(HAVE_NVCC),)
HYBRID_OBJS := $(MAIN_OBJ) $(HOST_OBJ) $(OBJ)/common/backend_hybrid.o $(OBJ)/common/gpu.o $(OBJ)/common/gpu_peak.o \
               $(OBJ)/common/reference_cpu.o $(OBJ)/common/cpu_info.o $(OBJ)/common/cpu_peak.o $(NODE_CPU_OBJ)
define HYBRID_STEP_RULE
$(BUILD)/step$(call step_num,$(1)): $(patsubst %.cu,$(OBJ)/%.o,$(filter-out %_bench.cu,$(wildcard $(1)/*.cu))) $(HYBRID_OBJS)
	$(NVCC) $(GENCODE) $(NVLDFLAGS) -Xcompiler -fopenmp $$^ -o $$@ $(LDLIBS_GPU) $(BLAS_LIBS) -lpthread
$(patsubst %.cu,$(OBJ)/%.o,$(wildcard $(1)/*.cu)): override NVFLAGS += -Xcompiler -fopenmp
endef
else
define HYBRID_STEP_RULE
$(BUILD)/step$(call step_num,$(1)):
	@echo "make: $$@ is a CPU+GPU step: $(NO_NVCC_NOTE)"; exit 2
endef
endif
$(OBJ)/common/backend_hybrid.o: override NVFLAGS += $(BLAS_CFLAGS) -Xcompiler -fopenmp
$(foreach d,$(GPU_STEP_DIRS),$(eval $(call GPU_STEP_RULE,$(d))))
$(foreach d,$(HYBRID_STEP_DIRS),$(eval $(call HYBRID_STEP_RULE,$(d))))
$(foreach d,$(CPU_STEP_DIRS),$(eval $(call CPU_STEP_RULE,$(d))))

# ---------------------------------------------------------------- MPI steps
# Step 23 runs on many processes: its kernel.c (SUMMA) and the distributed harness (common/dist_*.c, in
# place of main.c) are compiled with MPICC and linked with step 21 as the node-level routine. Without
# mpicc it is not built, and says so. Its baseline, ScaLAPACK's PDGEMM, is found with pkg-config
# (Debian's scalapack-openmpi), else by linking -lscalapack-openmpi or -lscalapack; SCALAPACK_LIBS="-L<dir>
# -lscalapack-openmpi" names one elsewhere; SCALAPACK=none builds without it ("baseline: none").
# (an install command as the user types it: with sudo unless root, as tests/deps.sh prints it)
SUDO := $(if $(filter 0,$(shell id -u)),,sudo )
NO_MPI_NOTE := mpicc (Open MPI) is not on PATH, so the MPI step is not built; install it: $(SUDO)apt-get install -y openmpi-bin libopenmpi-dev
SCALAPACK_PKG := libscalapack-openmpi-dev
SCALAPACK_PROBE = printf 'void pdgemm_(void);int main(void){pdgemm_();return 0;}' | \
    $(MPICC) -x c - -o /dev/null $(1) $(BLAS_LIBS) >/dev/null 2>&1 && echo $(1)
ifeq ($(SCALAPACK),none)
  override SCALAPACK_LIBS :=
else ifeq ($(origin SCALAPACK_LIBS),undefined)
  SCALAPACK_LIBS := $(if $(HAVE_MPI),$(or $(shell pkg-config --libs scalapack-openmpi 2>/dev/null),\
      $(shell $(call SCALAPACK_PROBE,-lscalapack-openmpi)),$(shell $(call SCALAPACK_PROBE,-lscalapack))))
endif
HAVE_SCALAPACK := $(if $(strip $(SCALAPACK_LIBS)),1,)
# The stamp holds whether ScaLAPACK is in, so that a build with and one without do not share objects.
SCALAPACK_STAMP := $(OBJ)/scalapack.flag
$(shell mkdir -p $(OBJ) && { [ "$$(cat $(SCALAPACK_STAMP) 2>/dev/null)" = "x$(HAVE_SCALAPACK)" ] || echo "x$(HAVE_SCALAPACK)" > $(SCALAPACK_STAMP); })
# (The layout and the data generation use no MPI: the unit test build/test_dist links them without it.)
DIST_MPI_OBJ := $(patsubst %,$(OBJ)/common/dist_%.o,main run mpi verify scalapack)
DIST_OBJ := $(DIST_MPI_OBJ) $(OBJ)/common/dist_layout.o $(OBJ)/common/dist_data.o
MPI_KERNEL_OBJ := $(foreach d,$(MPI_STEP_DIRS),$(OBJ)/$(d)/kernel.o)
MPI_STEP_OBJS := $(DIST_OBJ) $(HOST_OBJ) $(OBJ)/common/reference_cpu.o $(OBJ)/common/cpu_info.o \
                 $(OBJ)/common/cpu_peak.o $(NODE_CPU_OBJ)
$(DIST_MPI_OBJ) $(MPI_KERNEL_OBJ): CC := $(MPICC)
# The step's kernel is compiled with the GPU settings (local=hybrid, local=gpu) only where there is nvcc: a
# stamp of nvcc's presence recompiles it when nvcc comes or goes in the same build folder (as for ScaLAPACK).
NVCC_STAMP := $(OBJ)/nvcc.flag
$(shell mkdir -p $(OBJ) && { [ "$$(cat $(NVCC_STAMP) 2>/dev/null)" = "x$(HAVE_NVCC)" ] || echo "x$(HAVE_NVCC)" > $(NVCC_STAMP); })
$(MPI_KERNEL_OBJ): $(NVCC_STAMP)
$(OBJ)/common/dist_main.o $(OBJ)/common/dist_scalapack.o: override CFLAGS += $(BLAS_CFLAGS) -fopenmp
$(OBJ)/common/dist_scalapack.o: override CFLAGS += $(if $(HAVE_SCALAPACK),-DHAVE_SCALAPACK)
$(OBJ)/common/dist_scalapack.o: $(SCALAPACK_STAMP)
# --param local=hybrid: where nvcc is, step 22 is linked in as the second node-level routine: its object
# with STEP renamed NODE_HYBRID_STEP (as step 21's above), its GPU routine, and the CUDA libraries.
ifneq ($(and $(HAVE_NVCC),$(HYBRID_STEP_DIRS)),)
NODE_HYBRID_DIR := $(firstword $(HYBRID_STEP_DIRS))
NODE_HYBRID_OBJ := $(OBJ)/$(NODE_HYBRID_DIR)/node.o
$(NODE_HYBRID_OBJ): $(OBJ)/$(NODE_HYBRID_DIR)/kernel.o
	objcopy --redefine-sym STEP=NODE_HYBRID_STEP $< $@
CUDA_LIBDIR := $(abspath $(dir $(shell command -v $(NVCC)))../lib64)
MPI_HYBRID_OBJS := $(NODE_HYBRID_OBJ) $(OBJ)/common/gpu.o \
    $(patsubst %.cu,$(OBJ)/%.o,$(filter-out %/kernel.cu %_bench.cu,$(wildcard $(NODE_HYBRID_DIR)/*.cu)))
MPI_HYBRID_LIBS := -L$(CUDA_LIBDIR) -Wl,-rpath,$(CUDA_LIBDIR) -lcublas -lcudart -lstdc++ -lpthread
$(MPI_KERNEL_OBJ): override CFLAGS += -DHAVE_NODE_HYBRID
# --param local=gpu: the step's other C files (summa_gpu.c: SUMMA on each rank's GPU) are C against the
# CUDA runtime, cuBLAS and step 22's FP64 kernel, and NCCL where it is found: NCCL_LIBS="-L<dir> -lnccl" and
# NCCL_CFLAGS="-I<dir>" name one elsewhere; NCCL=none builds without it (panels staged through host memory).
CUDA_INCDIR := $(abspath $(dir $(shell command -v $(NVCC)))../include)
HASH := \#
NCCL_PROBE = printf '$(HASH)include <nccl.h>\nint main(void){ncclUniqueId id;return ncclGetUniqueId(&id)!=ncclSuccess;}' | \
    $(MPICC) -x c - -o /dev/null -I$(CUDA_INCDIR) $(NCCL_CFLAGS) $(1) -L$(CUDA_LIBDIR) -lcudart >/dev/null 2>&1 && echo $(1)
ifeq ($(NCCL),none)
  override NCCL_LIBS :=
else ifeq ($(origin NCCL_LIBS),undefined)
  NCCL_LIBS := $(if $(HAVE_MPI),$(shell $(call NCCL_PROBE,-lnccl)))
endif
HAVE_NCCL := $(if $(strip $(NCCL_LIBS)),1,)
NCCL_STAMP := $(OBJ)/nccl.flag
$(shell mkdir -p $(OBJ) && { [ "$$(cat $(NCCL_STAMP) 2>/dev/null)" = "x$(HAVE_NCCL)" ] || echo "x$(HAVE_NCCL)" > $(NCCL_STAMP); })
MPI_GPU_OBJ := $(patsubst %.c,$(OBJ)/%.o,$(filter-out %/kernel.c,$(wildcard $(MPI_STEP_DIRS:%=%/*.c))))
$(MPI_GPU_OBJ): CC := $(MPICC)
$(MPI_GPU_OBJ): override CFLAGS += -I$(CUDA_INCDIR) -I$(NODE_HYBRID_DIR) $(if $(HAVE_NCCL),-DHAVE_NCCL $(NCCL_CFLAGS))
$(MPI_GPU_OBJ): $(NCCL_STAMP)
$(MPI_KERNEL_OBJ): override CFLAGS += -DHAVE_SUMMA_GPU
MPI_HYBRID_OBJS += $(MPI_GPU_OBJ)
MPI_HYBRID_LIBS += $(NCCL_LIBS)
# A stand-in for the CUDA runtime, cuBLAS and NCCL on the host (tests/fake_cuda.c): tests/mpi.sh preloads
# it into step 23 where there is no GPU, to test local=gpu's ordering of streams and broadcasts.
FAKE_CUDA := $(if $(HAVE_MPI),$(BUILD)/fake_cuda.so)
tests: $(FAKE_CUDA)
$(BUILD)/fake_cuda.so: tests/fake_cuda.c $(NCCL_STAMP)
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -O2 -Wall -Wextra -fPIC -shared -I$(CUDA_INCDIR) $(if $(HAVE_NCCL),-DHAVE_NCCL $(NCCL_CFLAGS)) \
	    $< -o $@ $(BLAS_LIBS)
endif
ifneq ($(HAVE_MPI),)
define MPI_STEP_RULE
$(BUILD)/step$(call step_num,$(1)): $(OBJ)/$(1)/kernel.o $(MPI_STEP_OBJS) $(MPI_HYBRID_OBJS)
	$(MPICC) -fopenmp $(LDFLAGS) $$^ -o $$@ $(LDLIBS_CPU) $(SCALAPACK_LIBS) $(MPI_HYBRID_LIBS) -ldl
	@$(if $(HAVE_SCALAPACK),:,echo "make: $$@ is built without a baseline (baseline: none): install $(SCALAPACK_PKG) to time ScaLAPACK's PDGEMM beside it")
	@$(if $(HAVE_NVCC),$(if $(HAVE_NCCL),:,echo "make: $$@ is built without NCCL: with --param local=gpu its panels are staged through host memory (NCCL_LIBS names a libnccl elsewhere)"),:)
endef
else
define MPI_STEP_RULE
$(BUILD)/step$(call step_num,$(1)):
	@echo "make: $$@ is an MPI step: $(NO_MPI_NOTE)"; exit 2
endef
endif
$(foreach d,$(MPI_STEP_DIRS),$(eval $(call MPI_STEP_RULE,$(d))))
no-mpi-note:
	@$(if $(or $(HAVE_MPI),$(if $(MPI_STEP_DIRS),,1)),:,echo "make: note: $(NO_MPI_NOTE)")

# `make run STEP=NN [NP=4] [ARGS="..."]`: run a step, an MPI step under mpirun on NP ranks with
# OMP_NUM_THREADS (default: the physical cores over NP, at least 1) threads each, bound to cores where they fit
# (else oversubscribed, unbound). The command is printed first. Open MPI's run-as-root switches are set.
NP ?= 4
run: need-step
	@$(MAKE) --no-print-directory $(BUILD)/step$(STEP)
	@if [ -n "$(filter $(STEP_DIR),$(MPI_STEP_DIRS))" ]; then \
	    cores=$$(lscpu -p=core,socket 2>/dev/null | grep -v '^#' | sort -u | grep -c .); \
	    [ "$$cores" -gt 0 ] 2>/dev/null || cores=$$(nproc); \
	    threads=$${OMP_NUM_THREADS:-$$(( cores / $(NP) > 0 ? cores / $(NP) : 1 ))}; \
	    if [ $$(( $(NP) * threads )) -le "$$cores" ]; then bind="--map-by slot:PE=$$threads --bind-to core"; \
	    else bind="--oversubscribe --bind-to none"; fi; \
	    cmd="$(MPIRUN) -np $(NP) $$bind -x OMP_NUM_THREADS=$$threads $(BUILD)/step$(STEP) $(ARGS)"; \
	    echo "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=$$threads $$cmd"; \
	    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=$$threads $$cmd; \
	else echo "$(BUILD)/step$(STEP) $(ARGS)"; $(BUILD)/step$(STEP) $(ARGS); fi
.PHONY: run no-mpi-note

# The ceilings: the GPU's measured FP32 FMA peak and memory bandwidth (step 00's second program),
# the CPU's FP64 FMA peak on one core and on all, and its memory bandwidth (the first CPU step's).
$(BUILD)/peak: $(OBJ)/steps/00_cublas/peak.o $(OBJ)/common/error.o $(OBJ)/common/gpu.o $(OBJ)/common/gpu_peak.o \
              $(OBJ)/common/matrix.o
	$(if $(HAVE_NVCC),$(NVCC) $(GENCODE) $(NVLDFLAGS) $^ -o $@ $(LDLIBS_GPU),@echo "make: $(NO_NVCC_NOTE)"; exit 2)
# Step 13's measurement of which register-bank patterns of an FFMA cost a cycle.
$(BUILD)/bank_bench: $(OBJ)/steps/13_register_banks/bank_bench.o $(OBJ)/common/error.o $(OBJ)/common/gpu.o
	$(if $(HAVE_NVCC),$(NVCC) $(GENCODE) $(NVLDFLAGS) $^ -o $@ $(LDLIBS_GPU),@echo "make: $(NO_NVCC_NOTE)"; exit 2)
# Hopper's steps (28 on): wgmma and setmaxnreg exist only in sm_90a code, which runs on sm_90 alone; these
# objects get their own -gencode, whatever ARCH is (the steps exit 4 on any other GPU).
HOPPER_GENCODE := -gencode arch=compute_90a,code=sm_90a
HOPPER_STEP_DIRS := steps/28_tma_wgmma steps/29_warp_specialized steps/30_persistent steps/31_stream_k
$(foreach d,$(HOPPER_STEP_DIRS),$(OBJ)/$(d)/%.o): GENCODE = $(HOPPER_GENCODE)
# Part IV's ceiling: the BF16 tensor-core rate through mma.sync and through wgmma (sm_90a, step 31's directory).
$(BUILD)/tc_peak: $(OBJ)/steps/31_stream_k/tc_peak.o $(OBJ)/common/error.o $(OBJ)/common/gpu.o
	$(if $(HAVE_NVCC),$(NVCC) $(GENCODE) $(NVLDFLAGS) $^ -o $@ $(LDLIBS_GPU),@echo "make: $(NO_NVCC_NOTE)"; exit 2)
# Step 27's probe: can racecheck follow a hand-off through mbarriers (make sanitize asks it)?
$(BUILD)/racecheck_probe: $(OBJ)/steps/27_shift_sync/racecheck_probe.o $(OBJ)/common/error.o $(OBJ)/common/gpu.o
	$(if $(HAVE_NVCC),$(NVCC) $(GENCODE) $(NVLDFLAGS) $^ -o $@ $(LDLIBS_GPU),@echo "make: $(NO_NVCC_NOTE)"; exit 2)
# Step 22's own FP64 kernel against cuBLAS DGEMM on device-resident data.
$(BUILD)/tc_bench: $(OBJ)/steps/22_hybrid/tc_bench.o $(OBJ)/steps/22_hybrid/tc_dgemm.o $(OBJ)/common/error.o \
                   $(OBJ)/common/gpu.o
	$(if $(HAVE_NVCC),$(NVCC) $(GENCODE) $(NVLDFLAGS) $^ -o $@ $(LDLIBS_GPU),@echo "make: $(NO_NVCC_NOTE)"; exit 2)
$(BUILD)/cpu_peak: $(OBJ)/$(firstword $(CPU_STEP_DIRS))/peak.o $(OBJ)/common/error.o $(OBJ)/common/cpu_info.o \
                   $(OBJ)/common/cpu_peak.o $(OBJ)/common/matrix.o $(OBJ)/common/timing.o
	$(CC) -fopenmp $(LDFLAGS) $^ -o $@ -lm

# Unit tests of common/: host code only, no GPU needed.
$(BUILD)/test_verify: $(OBJ)/tests/test_verify.o $(HOST_OBJ)
	$(CC) $(LDFLAGS) $^ -o $@ -lm
$(BUILD)/test_cli: $(OBJ)/tests/test_cli.o $(HOST_OBJ)
	$(CC) $(LDFLAGS) $^ -o $@ -lm
$(BUILD)/test_reference: $(OBJ)/tests/test_reference.o $(HOST_OBJ) $(OBJ)/common/reference_cpu.o
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS_CPU)
$(BUILD)/test_dist: $(OBJ)/tests/test_dist.o $(HOST_OBJ) $(OBJ)/common/dist_layout.o $(OBJ)/common/dist_data.o
	$(CC) $(LDFLAGS) $^ -o $@ -lm

# Step 14's plans at the H200's 132 SMs, checked on the host: its kernel file compiled with the committed
# tuned_h200.h (whatever TUNED says: the test is of lesson 14's tables). Needs nvcc, not a GPU.
ifneq ($(HAVE_NVCC),)
tests: $(BUILD)/test_plan14
$(OBJ)/tests/test_plan14.o: override NVFLAGS += --pre-include $(TUNED_DIR)/tuned_h200.h
$(BUILD)/test_plan14: $(OBJ)/tests/test_plan14.o $(HOST_OBJ) $(GPU_OBJ)
	$(NVCC) $(GENCODE) $(NVLDFLAGS) $^ -o $@ $(LDLIBS_GPU)
# Step 31's work items and stream-K rule, walked on the host (its kernel file compiled for sm_90a, as the
# step is; run without a GPU).
tests: $(BUILD)/test_schedule31
$(OBJ)/tests/test_schedule31.o: GENCODE = $(HOPPER_GENCODE)
$(BUILD)/test_schedule31: $(OBJ)/tests/test_schedule31.o $(HOST_OBJ) $(GPU_OBJ)
	$(NVCC) $(GENCODE) $(NVLDFLAGS) $^ -o $@ $(LDLIBS_GPU)
# Steps 25, 26 and 27's copies, ldmatrix, mma.sync and epilogue, and step 27's mbarriers, emulated on the
# host with the kernels' own index functions (step 26's kernel file, and step 25's and 27's, compiled as the
# steps are; run without a GPU).
tests: $(BUILD)/test_fragments
$(BUILD)/test_fragments: $(OBJ)/tests/test_fragments.o $(HOST_OBJ) $(GPU_OBJ)
	$(NVCC) $(GENCODE) $(NVLDFLAGS) $^ -o $@ $(LDLIBS_GPU)
endif

# ---------------------------------------------------------------- tests
# The README's test command. Ends with "N passed, N failed"; non-zero on failure.
# On a fresh machine it first installs what is missing (as root) or says what to install.
# `make test` samples the depth by the seed (under 10 minutes on 2 cores without a GPU); `make test-full`
# (FULL=1, what CI runs) runs every check (tests/run.sh says how they differ).
test:
	@tests/deps.sh
	@$(MAKE) --no-print-directory -j$$(nproc) all
	@tests/run.sh
test-full:
	@tests/deps.sh
	@$(MAKE) --no-print-directory -j$$(nproc) all
	@FULL=1 tests/run.sh

# One step, as an exercise is checked: the shape set (odd shapes, leading dimensions, alpha/beta,
# NaN poison) and one timed shape against the baseline. Needs no other step built.
# ARGS="--param NAME=VALUE" checks the step with one of its settings.
# Built first, from a clean tree too: the step, the student's copy, and the test programs that the step's
# checks run besides it (tests/mpi.sh --check starts with build/test_dist, the layout's unit test).
CHECK_BINS = $(BUILD)/step$(STEP) $(if $(LAB_SRC),$(LAB_BIN)) $(if $(filter $(STEP_DIR),$(MPI_STEP_DIRS)),$(BUILD)/test_dist)
check: need-step $(if $(strip $(SRC)),lab-src)
	@tests/deps.sh
	@$(MAKE) --no-print-directory $(CHECK_BINS)
	@$(or $(LAB_NEEDS_GPU),:)
	@$(if $(filter $(STEP_DIR),$(MPI_STEP_DIRS)),tests/mpi.sh --check,tests/check.sh $(STEP)) $(if $(LAB_SRC),$(LAB_BIN) $(LAB_SRC))

# compute-sanitizer (GPU) and ASan/UBSan (host) over the steps.
sanitize:
	@tests/deps.sh
	@$(MAKE) --no-print-directory -j$$(nproc) all
	@tests/sanitize.sh

# The autotuned step's tuner (needs a GPU): every candidate of its space built, verified and timed;
# the winners go to build/tuned.h (TUNE_ARGS="--out FILE" elsewhere), and the step is rebuilt with them.
tune: $(GPU_STEP_OBJS)
	@TUNE_NVCC="$(NVCC) $(NVFLAGS)" TUNE_LINK="$(NVCC) $(GENCODE) $(NVLDFLAGS)" TUNE_OBJS="$^" \
	    TUNE_LIBS="$(LDLIBS_GPU)" $(TUNED_DIR)/tune.sh $(TUNE_ARGS)
	@$(MAKE) --no-print-directory $(BUILD)/step$(TUNED_STEP)

# ---------------------------------------------------------------- labs (make lab, make check SRC=)
# `make lab STEP=NN [DIR=lab_NN]`: a student's workspace for the lab of step NN (labs/NN.md; DIR relative
# to this directory unless absolute, refused if not empty): the kernel with its LAB regions cut out, the
# lesson, a README and a Makefile that calls the two targets below with the student's file (labs/make_lab.sh).
# `make check STEP=NN SRC=FILE`: FILE, a copy of the step's kernel, is built with the step's flags against
# common/ into $(LAB_OUT)/stepNN_student and checked in place of the step, then timed against the step
# itself (the reference solution) and the vendor library (tests/check.sh). `make lab-build ...` only builds.
DIR ?= lab_$(STEP)
lab: need-step
	@labs/make_lab.sh $(STEP) "$(DIR)"
LAB_OUT ?= $(BUILD)/lab
LAB_SRC := $(if $(strip $(SRC)),$(abspath $(SRC)))
LAB_BIN := $(LAB_OUT)/step$(STEP)_student
LAB_OBJ := $(LAB_OUT)/step$(STEP)_student.o
LAB_GPU := $(filter %.cu,$(LAB_SRC))
# SRC must exist and be the same kind as the step's kernel (kernel.cu: a .cu file). The hybrid step's and the
# MPI step's other sources (step 22's tc_dgemm.cu, step 23's summa_gpu.c) are the step's own, linked beside it.
lab-src: need-step
	@test -n "$(LAB_SRC)" || { echo "error: say which file, e.g. make $(MAKECMDGOALS) STEP=$(STEP) SRC=lab_$(STEP)/kernel.cu"; exit 2; }
	@test -f "$(LAB_SRC)" || { echo "error: SRC=$(SRC): no such file"; exit 2; }
	@test "$(suffix $(LAB_SRC))" = "$(suffix $(wildcard $(STEP_DIR)/kernel.c $(STEP_DIR)/kernel.cu))" || \
	    { echo "error: SRC=$(SRC) is not a $(suffix $(wildcard $(STEP_DIR)/kernel.c $(STEP_DIR)/kernel.cu)) file like $(STEP_DIR)'s kernel"; exit 2; }
lab-build: lab-src
	@$(MAKE) --no-print-directory $(LAB_BIN)
# `make lab-objs`: the repository's objects that the labs' binaries link (common/, the hybrid step's and the
# MPI step's own), built once before several workspaces build at the same time (tests/lab.sh): each
# workspace's make would otherwise build a missing object itself, and one could link another's half-written file.
LAB_OBJS := $(CPU_STEP_OBJS) $(if $(HAVE_NVCC),$(GPU_STEP_OBJS) $(HYBRID_OBJS) \
    $(patsubst %.cu,$(OBJ)/%.o,$(filter-out %/kernel.cu %_bench.cu,$(foreach d,$(HYBRID_STEP_DIRS),$(wildcard $(d)/*.cu))))) \
    $(if $(HAVE_MPI),$(MPI_STEP_OBJS) $(MPI_HYBRID_OBJS))
lab-objs: $(LAB_OBJS)
.PHONY: lab lab-src lab-build lab-objs
ifneq ($(LAB_SRC),)
# The stamp holds the source's path, so that another SRC= rebuilds the binary.
LAB_STAMP := $(LAB_OUT)/step$(STEP)_student.src
$(shell mkdir -p $(LAB_OUT) && { [ "$$(cat $(LAB_STAMP) 2>/dev/null)" = "$(LAB_SRC)" ] || echo "$(LAB_SRC)" > $(LAB_STAMP); })
# The student's file is compiled as the step's own kernel is: its quoted includes found in the step's folder
# too (step 27's mbarrier.h, step 29's hopper.h, step 22's tc_dgemm.h, step 23's summa.h), and a Hopper step's
# as sm_90a code. The hybrid step's and the MPI step's are linked as those steps are (their rules above).
LAB_HYBRID := $(filter steps/$(STEP)_%,$(HYBRID_STEP_DIRS))
LAB_MPI := $(filter steps/$(STEP)_%,$(MPI_STEP_DIRS))
LAB_COMPILE = $(if $(LAB_GPU),$(NVCC) $(NVFLAGS) $(if $(LAB_HYBRID),-Xcompiler -fopenmp) -I$(STEP_DIR),$(if $(LAB_MPI),\
    $(MPICC) $(CFLAGS) $(if $(MPI_GPU_OBJ),-DHAVE_NODE_HYBRID -DHAVE_SUMMA_GPU) -I$(STEP_DIR),$(CC) $(CFLAGS) -O3 -fopenmp))
$(LAB_OBJ): $(LAB_SRC) $(LAB_STAMP)
	@mkdir -p $(dir $@)
	$(LAB_COMPILE) -c $< -o $@
ifneq ($(filter steps/$(STEP)_%,$(HOPPER_STEP_DIRS)),)
$(LAB_OBJ): GENCODE = $(HOPPER_GENCODE)
endif
ifneq ($(LAB_HYBRID),)
# (the lab of the hybrid step grades its GPU side: make check says, exit 4, where there is no CUDA device)
LAB_NEEDS_GPU := nvidia-smi -L 2>/dev/null | grep -q '^GPU' || { echo "make check: lab $(STEP) grades the GPU side \
    (the split, the overlap), and this machine cannot run it: no CUDA device"; exit 4; }
ifneq ($(HAVE_NVCC),)
$(LAB_BIN): $(LAB_OBJ) $(patsubst %.cu,$(OBJ)/%.o,$(filter-out %/kernel.cu %_bench.cu,$(wildcard $(LAB_HYBRID)/*.cu))) $(HYBRID_OBJS)
	$(NVCC) $(GENCODE) $(NVLDFLAGS) -Xcompiler -fopenmp $^ -o $@ $(LDLIBS_GPU) $(BLAS_LIBS) -lpthread
else
$(LAB_BIN):
	@echo "make: $@ is a CPU+GPU step: $(NO_NVCC_NOTE)"; exit 2
endif
else ifneq ($(LAB_MPI),)
ifneq ($(HAVE_MPI),)
$(LAB_BIN): $(LAB_OBJ) $(MPI_STEP_OBJS) $(MPI_HYBRID_OBJS)
	$(MPICC) -fopenmp $(LDFLAGS) $^ -o $@ $(LDLIBS_CPU) $(SCALAPACK_LIBS) $(MPI_HYBRID_LIBS) -ldl
else
$(LAB_BIN):
	@echo "make: $@ is an MPI step: $(NO_MPI_NOTE)"; exit 2
endif
else ifneq ($(LAB_GPU),)
ifneq ($(HAVE_NVCC),)
$(LAB_BIN): $(LAB_OBJ) $(GPU_STEP_OBJS)
	$(NVCC) $(GENCODE) $(NVLDFLAGS) $^ -o $@ $(LDLIBS_GPU)
else
$(LAB_BIN):
	@echo "make: $@ is a GPU step: $(NO_NVCC_NOTE)"; exit 2
endif
else
$(LAB_BIN): $(LAB_OBJ) $(CPU_STEP_OBJS)
	$(CC) -fopenmp $(LDFLAGS) $^ -o $@ $(LDLIBS_CPU)
endif
-include $(LAB_OBJ:.o=.d)
endif

# ---------------------------------------------------------------- reading a step
# STEP=07 names steps/07_*; the helpers below find its directory and the previous one.
STEP_DIR = $(firstword $(filter steps/$(STEP)_%,$(STEP_DIRS)))
PREV_DIR = $(lastword $(filter-out $(STEP_DIR),$(foreach d,$(STEP_DIRS),$(if $(filter $(STEP_DIR),$(firstword $(sort $(d) $(STEP_DIR)))),,$(d)))))

need-step:
	@test -n "$(STEP)" || { echo "error: say which step, e.g. make $(MAKECMDGOALS) STEP=01"; exit 2; }
	@test -n "$(STEP_DIR)" || { echo "error: no step $(STEP) under steps/"; exit 2; }
.PHONY: need-step

# The lesson as a diff: this step's kernel against the previous step's, and each header against the previous
# step's of the same name (step 31's hopper.h against step 30's); a header the previous step lacks shows as
# added (step 30's epilogue.h).
# A step that starts a new part (CPU after GPU, say) diffs against the step it builds on where it names one
# below (step 24, the first tensor-core step, is step 02's shared-memory tiling with fragments in place of
# scalars); otherwise it has no previous step to diff against.
DIFF_BASE_24_wmma = steps/02_smem_tiling
DIFF_DIR = $(or $(DIFF_BASE_$(notdir $(STEP_DIR))),$(PREV_DIR))
diff: need-step
	@cur=$$(ls $(STEP_DIR)/kernel.c*); prev=$$(ls $(DIFF_DIR)/kernel.c* 2>/dev/null); \
	if [ -z "$(DIFF_DIR)" ]; then echo "$(STEP_DIR) is the first step: nothing to diff against"; \
	elif [ "$${cur##*.}" != "$${prev##*.}" ]; then \
	    echo "$(STEP_DIR) starts a new part ($$prev is another kind of step): nothing to diff against"; \
	else [ "$(DIFF_DIR)" = "$(PREV_DIR)" ] || echo "($(STEP_DIR) opens a part: against $(DIFF_DIR), the step it builds on)"; \
	    diff -u $$prev $$cur || true; \
	    for f in $(STEP_DIR)/*.h; do \
	        if [ -f "$$f" ] && [ -f "$(DIFF_DIR)/$${f##*/}" ]; then diff -u "$(DIFF_DIR)/$${f##*/}" "$$f" || true; \
	        elif [ -f "$$f" ]; then diff -u /dev/null "$$f" || true; fi; \
	    done; fi

# The step's machine code (needs cuobjdump, which comes with the full CUDA toolkit).
sass: need-step
	@if ! command -v cuobjdump >/dev/null 2>&1; then \
	    echo "make sass: cuobjdump is not installed here (it comes with the full CUDA toolkit); nothing to show"; \
	elif [ ! -f $(STEP_DIR)/kernel.cu ]; then echo "make sass: $(STEP_DIR) is a CPU step; try objdump -d"; \
	else $(MAKE) --no-print-directory $(OBJ)/$(STEP_DIR)/kernel.o && cuobjdump -sass $(OBJ)/$(STEP_DIR)/kernel.o; fi

# Registers, shared memory, stack and spills per kernel, from ptxas.
regs: need-step
	@if [ ! -f $(STEP_DIR)/kernel.cu ]; then echo "make regs: $(STEP_DIR) is a CPU step"; \
	elif [ -z "$(HAVE_NVCC)" ]; then echo "make regs: $(NO_NVCC_NOTE)"; exit 2; \
	else $(NVCC) $(NVFLAGS) $(if $(filter $(STEP_DIR),$(TUNED_DIR)),$(if $(filter-out none,$(TUNED)),--pre-include $(TUNED))) \
	    --resource-usage -c $(STEP_DIR)/kernel.cu -o /dev/null 2>&1 \
	    | grep -E 'Function properties|stack frame|Used' | sed -e 's/^ptxas info *: //' | c++filt; fi

# Hardware counters of one 4096^3 run (needs ncu and a GPU); NCU_ARGS adds sections or metrics,
# e.g. NCU_ARGS="--section WarpStateStats".
profile: need-step
	@if ! command -v ncu >/dev/null 2>&1; then \
	    echo "make profile: ncu (Nsight Compute) is not installed here; nothing to profile"; \
	else $(MAKE) --no-print-directory $(BUILD)/step$(STEP) && \
	    ncu --clock-control none $(NCU_ARGS) --kernel-name regex:'^(?!widen|fma_peak)' --launch-skip 1 --launch-count 1 \
	        $(BUILD)/step$(STEP) -m 4096 --reps 1 --warmup 1 --no-check; fi

# The charts of every machine's data (plots/data/<device> -> plots/charts/<device>), the lessons'
# diagrams, and the README's step table and the lessons' tables and figures from the committed data.
# Needs gnuplot for the charts; without it, says so and renders none.
plots:
	@for d in plots/data/*/; do plots/render.sh --data "$${d%/}" || exit 1; done
	@plots/diagrams.sh
	@plots/readme_table.sh
	@plots/lesson_tables.sh

# HTML documentation from common/, the steps and their lessons (needs doxygen).
docs:
	@if ! command -v doxygen >/dev/null 2>&1; then \
	    echo "make docs: doxygen is not installed here ($(SUDO)apt-get install -y doxygen); nothing built"; \
	else doxygen docs/Doxyfile || exit 1; \
	    if [ -s docs/warnings.log ]; then cat docs/warnings.log; echo "make docs: warnings are errors here"; exit 1; fi; \
	    echo "docs/html/index.html: no warnings"; fi

# `make print-NVFLAGS` prints a variable (the tests build variants with the same flags).
print-%:
	@echo '$($*)'

clean:
	rm -rf $(BUILD) docs/html docs/warnings.log

help:
	@echo "make step07          build build/step07 (any step number)"
	@echo "make all             every step, build/peak, build/cpu_peak and the unit tests"
	@echo "make test            build everything and run the tests, depth sampled by the seed (under 10 min)"
	@echo "make test-full       the same with every check (what CI runs; FULL=1 tests/run.sh)"
	@echo "make check STEP=NN   one step over the shape set, then one timed shape (an exercise's check; ARGS=...)"
	@echo "make check STEP=NN SRC=FILE   a student's copy of the step's kernel, checked, timed and scored (JSON)"
	@echo "make lab STEP=NN     a lab's workspace in DIR=lab_NN: the kernel with TODOs, README, lesson (labs/)"
	@echo "make run STEP=NN     run one step (ARGS=...); an MPI step under mpirun on NP ranks (NP=4), the line printed"
	@echo "make sanitize        compute-sanitizer (GPU) and ASan/UBSan (host) over the steps (STEPS='NN ...' for some)"
	@echo "make tune            choose step $(TUNED_STEP)'s tiles for this GPU (writes build/tuned.h; TUNED=FILE|none)"
	@echo "make diff STEP=NN    the step's kernel against the previous step's: the lesson as a diff"
	@echo "make sass STEP=NN    the step's SASS (needs cuobjdump)"
	@echo "make regs STEP=NN    registers, shared memory and spills per kernel (ptxas)"
	@echo "make profile STEP=NN Nsight Compute on one 4096^3 run (needs ncu and a GPU; NCU_ARGS=...)"
	@echo "make plots           charts, diagrams, the README table and the lessons' figures from plots/data/"
	@echo "make docs            HTML documentation in docs/html (needs doxygen)"
	@echo "make clean           remove build/"
	@echo "ARCH=sm_80           build for another GPU (default: the present GPU's, else sm_90)"

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)
