# nothing matches: status 1 and the reason
status: 1
args: -l 'nosuch.*'
