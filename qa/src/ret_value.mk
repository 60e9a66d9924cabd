# qa/src/ret_value.mk - the workload of qa/401 (register writes of a
# guru-mode script in the kernel runtime): -O2 with DWARF, whatever
# CFLAGS say, so that its parameter and results live in registers.
$(BUILD)/bin/ret_value: qa/src/ret_value.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -g -O2 -o $@ $<

QA_EXTRA += $(BUILD)/bin/ret_value
