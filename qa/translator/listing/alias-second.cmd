# the second name of an alias lists as itself
args: -I "$dir/tapset" -L lt.second
