# qa/src/uprobe.mk - workloads of the user-space probe tests (qa/300-319):
# uprobe_target with DWARF (-g -O0) and SDT marks, a fully stripped copy
# (only .dynsym: hence -rdynamic), and libuprobe_lib.so, which both find
# beside themselves ($ORIGIN).
UPROBE_BIN := $(BUILD)/bin
UPROBE_CFLAGS := -std=gnu11 -g -O0 -fno-omit-frame-pointer

$(UPROBE_BIN)/libuprobe_lib.so: qa/src/uprobe_lib.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(UPROBE_CFLAGS) -fPIC -shared -o $@ $<

$(UPROBE_BIN)/uprobe_target: qa/src/uprobe_target.c qa/src/uprobe_traced.c $(UPROBE_BIN)/libuprobe_lib.so
	$(quiet) CC $@
	$(Q)$(CC) $(UPROBE_CFLAGS) -rdynamic -o $@ $(filter %.c,$^) -L$(UPROBE_BIN) -luprobe_lib \
		-Wl,-rpath,'$$ORIGIN'

$(UPROBE_BIN)/uprobe_target.stripped: $(UPROBE_BIN)/uprobe_target
	$(quiet) STRIP $@
	$(Q)strip -o $@ $<

QA_EXTRA += $(UPROBE_BIN)/libuprobe_lib.so $(UPROBE_BIN)/uprobe_target \
	$(UPROBE_BIN)/uprobe_target.stripped

# uprobe_inline: -O2, so that gcc inlines (.inline/.call tests)
$(UPROBE_BIN)/uprobe_inline: qa/src/uprobe_inline.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -g -O2 -o $@ $<

# uprobe_target.split: stripped, its DWARF in uprobe_target.split.debug beside it,
# named by .gnu_debuglink (separate debuginfo)
$(UPROBE_BIN)/uprobe_target.split.debug: $(UPROBE_BIN)/uprobe_target
	$(quiet) OBJCOPY $@
	$(Q)objcopy --only-keep-debug $< $@

$(UPROBE_BIN)/uprobe_target.split: $(UPROBE_BIN)/uprobe_target $(UPROBE_BIN)/uprobe_target.split.debug
	$(quiet) STRIP $@
	$(Q)strip --strip-debug --strip-unneeded -o $@.tmp $< && \
		objcopy --add-gnu-debuglink=$@.debug $@.tmp $@ && rm -f $@.tmp

QA_EXTRA += $(UPROBE_BIN)/uprobe_inline $(UPROBE_BIN)/uprobe_target.split \
	$(UPROBE_BIN)/uprobe_target.split.debug
