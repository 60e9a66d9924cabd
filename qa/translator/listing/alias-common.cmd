# an alias over two tracepoints: only what both have
needs: tracefs btf
args: -I "$dir/tapset" -L lt.wake_or_switch
