# qa/src/many_funcs.mk - the workload of the uprobe_multi tests (qa/170,
# qa/171): 128 functions with DWARF (-g -O0) and a mark with a semaphore.
$(BUILD)/bin/many_funcs: qa/src/many_funcs.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -g -O0 -o $@ $<

QA_EXTRA += $(BUILD)/bin/many_funcs
