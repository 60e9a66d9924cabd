# -c CMD and -x PID both name the target: stap refuses the pair
status: 1
args: -p1 -c /bin/ls -x 100 -e 'probe begin { exit() }'
