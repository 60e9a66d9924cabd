# TMPDIR: clang and kbuild write there; stap's safe characters only
status: 1
env: TMPDIR='/tmp/stap tmp here'
args: -p1 -e 'probe begin { exit() }'
