# qa/src/dyn_work.mk - dyn_work for the dyninst runtime's tests (qa/370-379),
# with DWARF (-g) for $t->x.
QA_EXTRA += $(BUILD)/bin/dyn_work

$(BUILD)/bin/dyn_work: qa/src/dyn_work.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -g -O2 -o $@ $< -lpthread

# a statically linked program: no dynamic linker loads libstapdyn.so into it
QA_EXTRA += $(BUILD)/bin/dyn_static

$(BUILD)/bin/dyn_static: qa/src/dyn_work.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -O2 -static -o $@ $< -lpthread
