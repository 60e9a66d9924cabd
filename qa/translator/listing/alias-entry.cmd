# aliases whose .return parts use @entry: the entry probes that save the
# values are not listed (socket.send is sock_sendmsg's return and others)
needs: btf
args: -l 'socket.s*'
