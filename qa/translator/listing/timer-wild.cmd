# timer.* matches only what needs no number: timer.profile
args: -l 'timer.*'
