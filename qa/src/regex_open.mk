# qa/src/regex_open.mk - regex_open, the workload of qa/050-054 (regular expressions).
QA_PROGRAMS += regex_open
regex_open_SRCS := qa/src/regex_open.c
