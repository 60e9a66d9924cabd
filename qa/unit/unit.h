/* unit.h - the CUnit harness every qa/unit/test_*.c links with. */
#ifndef PMSTAP_UNIT_H
#define PMSTAP_UNIT_H

#include <CUnit/CUnit.h>

/* Each test_NAME.c defines this: add its suites to the registry. */
void unit_register(void);

/* Add a suite with its tests from a NULL-terminated table. */
struct unit_case {
	const char *name;
	void (*fn)(void);
};
void unit_add_suite(const char *name, const struct unit_case *cases);

#endif
