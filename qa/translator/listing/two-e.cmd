# one script: a second -e is refused, as stap does
status: 1
args: -p1 -e 'probe begin { exit() }' -e 'probe end { exit() }'
