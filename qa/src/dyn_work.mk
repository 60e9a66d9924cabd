# qa/src/dyn_work.mk - dyn_work for the dyninst runtime's tests (qa/370-379),
# with DWARF (-g) for $t->x.
QA_EXTRA += $(BUILD)/bin/dyn_work

$(BUILD)/bin/dyn_work: qa/src/dyn_work.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -g -O2 -o $@ $< -lpthread
