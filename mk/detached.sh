#!/bin/bash
# mk/detached.sh CMD [ARG...] - run CMD with no open descriptor but 0, 1
# and 2.  For commands that start daemons (pmcd): a daemon keeps every
# descriptor it inherits, so a lock (flock), a pipe to a log reader or a
# make jobserver held by whoever ran the tests would stay held for as long
# as the daemon lives.
for fd in /proc/$$/fd/*; do
	fd=${fd##*/}
	[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done
exec "$@"
