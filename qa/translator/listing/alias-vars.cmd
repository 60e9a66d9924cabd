# -L of an alias: its locals as name:type, then the target variables
needs: tracefs btf
args: -I "$dir/tapset" -L lt.switch
