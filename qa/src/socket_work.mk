# qa/src/socket_work.mk - socket_work for the socket tapset's tests (qa/376, qa/377).
QA_PROGRAMS += socket_work
socket_work_SRCS := qa/src/socket_work.c
