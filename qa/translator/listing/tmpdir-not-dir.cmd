# TMPDIR that is not a directory pmstap can write: refused before pass 1
status: 1
env: TMPDIR=/dev/null/BADTMPDIR
args: -p1 -e 'probe begin { exit() }'
