# qa/src/dwarf_more.mk - dwarf_more for qa/330-339: -g -O0 (variables in
# memory) and -g -O2 (registers, pieces).

DWARF_MORE := $(BUILD)/bin/dwarf_more $(BUILD)/bin/dwarf_more_O2
QA_EXTRA += $(DWARF_MORE)

$(BUILD)/bin/dwarf_more: qa/src/dwarf_more.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -g -O0 -o $@ $<

$(BUILD)/bin/dwarf_more_O2: qa/src/dwarf_more.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -g -O2 -o $@ $<
