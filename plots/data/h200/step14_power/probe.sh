#!/usr/bin/env bash
# Clocks and power while step 14 and cuBLAS run 8192^3 and 4096^3 back to back (nvidia-smi every 20 ms).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
mkdir -p $OUT/p; P=$OUT/p
make -j16 step14 > $P/build.log 2>&1; echo "build rc=$? at $(el) s"
nvidia-smi --query-gpu=name,power.limit,power.default_limit,clocks.max.sm,clocks.sm,temperature.gpu --format=csv
R=clocks_event_reasons; nvidia-smi --help-query-gpu | grep -q "clocks_event_reasons.sw_power_cap" || R=clocks_throttle_reasons
F="timestamp,clocks.sm,power.draw,temperature.gpu,$R.sw_power_cap,$R.hw_slowdown,$R.sw_thermal_slowdown,utilization.gpu"
nvidia-smi --query-gpu=$F --format=csv,noheader,nounits -lms 20 > $P/smi.csv 2> $P/smi.err & SMI=$!
mark() { echo "$(date +%H:%M:%S.%N | cut -c1-12) $1" >> $P/marks.txt; }
sleep 1; mark start
build/step14 -m 8192 --reps 250 --warmup 5 --no-check > $P/r8192.txt 2>&1; mark "8192 done"
sleep 1; mark idle
build/step14 -m 4096 --reps 2000 --warmup 20 --no-check > $P/r4096.txt 2>&1; mark "4096 done"
sleep 1; kill $SMI; wait $SMI 2>/dev/null
nvidia-smi -q -d PERFORMANCE | head -30 > $P/perf.txt
tail -n 1 $P/r8192.txt $P/r4096.txt; cat $P/marks.txt
# half-second averages: time, MHz, W, power-cap flag share
awk -F', ' '{split($1,a," "); t=a[2]; s=substr(t,1,8) (substr(t,10,1)<5?".0":".5"); if (s!=last && n) {printf "%s %5.0f MHz %5.0f W cap %.2f util %3.0f\n", last, c/n, w/n, cap/n, u/n; c=w=cap=u=n=0} last=s; c+=$2; w+=$3; cap+=($5 ~ /Active/); u+=$8; n++} END{printf "%s %5.0f MHz %5.0f W cap %.2f util %3.0f\n", last, c/n, w/n, cap/n, u/n}' $P/smi.csv
echo "done at $(el) s"
