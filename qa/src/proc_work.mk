# qa/src/proc_work.mk - proc_work for the process/thread and backtrace tests
# (qa/340-359): -O0, so that every function, leaves too, keeps a frame
# pointer and user stacks walk; symbols, so that they name.
QA_EXTRA += $(BUILD)/bin/proc_work

$(BUILD)/bin/proc_work: qa/src/proc_work.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -g -O0 -fno-omit-frame-pointer -o $@ $< -lpthread
