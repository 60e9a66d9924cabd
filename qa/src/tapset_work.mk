# qa/src/tapset_work.mk - the workload of the tapset function table
# (qa/tapset/run.sh): -O0 with frame pointers and symbols, so that the
# uprobe rows find tw_args and user stacks walk.
QA_EXTRA += $(BUILD)/bin/tapset_work

$(BUILD)/bin/tapset_work: qa/src/tapset_work.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARNINGS) -g -O0 -fno-omit-frame-pointer -o $@ $<
