# qa/src/perf_work.mk - perf_work for qa/166 (per-process perf counters):
# -g, so that the uprobe on step() reads its $i and $minflt.
QA_EXTRA += $(BUILD)/bin/perf_work

$(BUILD)/bin/perf_work: qa/src/perf_work.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -g -O1 -o $@ $< -lpthread
