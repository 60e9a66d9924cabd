# a tracepoint system this kernel lacks
needs: tracefs
status: 1
args: -l 'kernel.trace("nosuch:*")'
