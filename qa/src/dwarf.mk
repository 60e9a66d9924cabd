# qa/src/dwarf.mk - dwarf_target for the target-variable tests (qa/320-339):
# -g -O0 (locations on the frame), -g -O2 (registers, location lists), a
# copy stripped of its debuginfo (its symbols stay), and -O1 with no
# statement frontiers or location views, whose line tables put a
# function's second line record past its entry (main's: qa/336).

DWARF_TARGETS := $(BUILD)/bin/dwarf_target $(BUILD)/bin/dwarf_target_O2 \
	$(BUILD)/bin/dwarf_target_stripped $(BUILD)/bin/dwarf_target_O1
QA_EXTRA += $(DWARF_TARGETS)

$(BUILD)/bin/dwarf_target: qa/src/dwarf_target.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -g -O0 -o $@ $<

$(BUILD)/bin/dwarf_target_O2: qa/src/dwarf_target.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -g -O2 -o $@ $<

$(BUILD)/bin/dwarf_target_stripped: $(BUILD)/bin/dwarf_target
	$(quiet) STRIP $@
	$(Q)strip --strip-debug -o $@ $<

$(BUILD)/bin/dwarf_target_O1: qa/src/dwarf_target.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -g -O1 -gno-statement-frontiers \
		-gno-variable-location-views -o $@ $<
