# aliases by name, sorted; an alias with two names listed once (by the
# first name the pattern matches), its probes from tapset files left out
needs: tracefs
args: -I "$dir/tapset" -l 'lt.*'
