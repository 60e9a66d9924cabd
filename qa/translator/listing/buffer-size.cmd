# -s: stap's check of the value (1-4095 MB), though pmstap has no such buffer
status: 1
args: -p1 -s 0 -e 'probe begin { exit() }'
