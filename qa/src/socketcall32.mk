# qa/src/socketcall32.mk - socketcall32, a 32-bit program with no libc, for
# qa/191 (syscall.send and .recv: ia32's socketcall).  gcc -m32 needs no
# 32-bit libraries with -nostdlib; where it cannot build one, the note
# says why and qa/191 says it did not run.
QA_EXTRA += $(BUILD)/bin/socketcall32

$(BUILD)/bin/socketcall32: qa/src/socketcall32.c
	$(quiet) CC $@
	@mkdir -p $(@D)
	$(Q)$(CC) -m32 -nostdlib -static -O1 -fno-stack-protector -fno-pie -no-pie \
		-o $@ $< 2>$@.err && rm -f $@.err || \
		echo "note: no 32-bit build of $< (qa/191 will not run): $$(head -n 1 $@.err)"
