# A bash job script: steps with sleeps between them, a log file appended.
for i in $(seq 1 ${1:-10}); do
  echo "step $i" | tee -a steps.log
  sleep 0.2
done
wc -l < steps.log
