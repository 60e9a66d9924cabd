# a file of the tapset path is not a script: stap refuses to run one
status: 1
args: -p1 tapset/indent.stp
