# process.*: the points with two components
args: -l 'process.*'
