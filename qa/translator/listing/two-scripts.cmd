# -l is the script: no -e with it
status: 1
args: -l begin -e 'probe end {}'
