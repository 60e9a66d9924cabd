# qa/src/dyn_stack.mk - dyn_stack for the dyninst runtime's backtrace test
# (qa/375): -O0 -fno-omit-frame-pointer, so that every function keeps a
# frame pointer and user stacks walk; symbols, so that they name.
QA_EXTRA += $(BUILD)/bin/dyn_stack

$(BUILD)/bin/dyn_stack: qa/src/dyn_stack.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -g -O0 -fno-omit-frame-pointer -o $@ $<

# the same without DWARF (its symbols kept): a function probe goes on the
# function's first instruction, push %rbp, not past the prologue
QA_EXTRA += $(BUILD)/bin/dyn_stack.nodw

$(BUILD)/bin/dyn_stack.nodw: $(BUILD)/bin/dyn_stack
	$(quiet) STRIP $@
	$(Q)strip --strip-debug -o $@ $<
