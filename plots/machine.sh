# What machine this is, as run_all.sh names its data directories (sourced).
#
#   gpu_machine   the GPU's name made file-safe: "NVIDIA H200" -> h200
#   cpu_machine   the CPU's model name, family and model numbers, widest vector instructions and
#                 cores: intel-xeon-processor-fam6-mod207-avx512-2c. Virtual machines often report a
#                 generic model name ("Intel(R) Xeon(R) Processor"); the numbers and the core count
#                 still tell two of them apart.
#   machine_fingerprint gpu|cpu   the line meta.txt keeps, to refuse writing over another machine's data

slug() { tr 'A-Z' 'a-z' | sed -e 's/^nvidia //' -e 's/([^)]*)//g' -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//'; }
cpuinfo_field() { sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo 2>/dev/null | head -n 1; }
cpu_model() { local m; m=$(cpuinfo_field 'model name'); echo "${m:-unknown CPU}"; }
cpu_simd() {
    local flags; flags=" $(cpuinfo_field flags) "
    case "$flags" in *" avx512f "*) echo avx512 ;; *" avx2 "*) echo avx2 ;; *) echo portable ;; esac
}
cpu_machine() {
    echo "$(cpu_model | slug)-fam$(cpuinfo_field 'cpu family')-mod$(cpuinfo_field model)-$(cpu_simd)-$(nproc)c"
}
gpu_model() { nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1; }
gpu_cc() { nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1; }
gpu_machine() { gpu_model | slug; }
machine_fingerprint() {
    if [ "$1" = gpu ]; then
        echo "$(gpu_model); compute capability $(gpu_cc); $(nvidia-smi --query-gpu=memory.total --format=csv,noheader 2>/dev/null | head -n 1)"
    else
        echo "$(cpu_model); family $(cpuinfo_field 'cpu family') model $(cpuinfo_field model); $(cpu_simd); $(nproc) cores"
    fi
}
