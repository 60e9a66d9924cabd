# an alias used with a suffix keeps the suffix
args: -I "$dir/tapset" -L lt.prof.tick
