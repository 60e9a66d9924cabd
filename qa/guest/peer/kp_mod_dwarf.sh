# the workload of kp_mod_dwarf.stp: a dummy device sends 5 UDP datagrams
# from this shell (each one dummy_xmit in this process: the device has no
# ARP and no queue); dummy is loaded first (the script's setup)
set -e
ip link add pmstapd2 type dummy
ip link set pmstapd2 up
ip addr add 10.214.0.1/24 dev pmstapd2
for i in 1 2 3 4 5; do echo xxxxxxxx >/dev/udp/10.214.0.2/9; done
ip link del pmstapd2
