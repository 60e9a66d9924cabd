# qa/src/dyn_throw.mk - dyn_throw, a C++ program that throws through probed
# frames, for the dyninst runtime's tests (qa/374); DWARF for $i.
QA_EXTRA += $(BUILD)/bin/dyn_throw
CXX ?= g++

$(BUILD)/bin/dyn_throw: qa/src/dyn_throw.cc
	$(quiet) CXX $@
	@mkdir -p $(@D)
	$(Q)$(CXX) -Wall -Wextra -g -O2 -o $@ $<
