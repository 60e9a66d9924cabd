# perf.sw.*: every software event, sorted
args: -l 'perf.sw.*'
