# qa/src/dwarf.mk - dwarf_target for the target-variable tests (qa/320-339):
# -g -O0 (locations on the frame), -g -O2 (registers, location lists) and
# a copy stripped of its debuginfo (its symbols stay).

DWARF_TARGETS := $(BUILD)/bin/dwarf_target $(BUILD)/bin/dwarf_target_O2 \
	$(BUILD)/bin/dwarf_target_stripped
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
