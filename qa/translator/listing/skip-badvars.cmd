# --skip-badvars: a $var the point lacks reads as 0, with stap's warning (its semok/badvar)
args: -p2 --skip-badvars -e 'probe begin { println($foo + 1, @defined($foo)) }'
