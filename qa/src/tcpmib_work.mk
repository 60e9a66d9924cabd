# qa/src/tcpmib_work.mk - tcpmib_work for the tcpmib tapset's test (qa/417).
QA_PROGRAMS += tcpmib_work
tcpmib_work_SRCS := qa/src/tcpmib_work.c
