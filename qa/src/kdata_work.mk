# qa/src/kdata_work.mk - kdata_work for qa/177 (kernel.data probes).
QA_PROGRAMS += kdata_work
kdata_work_SRCS := qa/src/kdata_work.c
