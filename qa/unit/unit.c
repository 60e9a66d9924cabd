/* unit.c - main() for a CUnit suite binary: run it, print "unit: N passed, N failed". */
#include <stdio.h>
#include <stdlib.h>
#include <CUnit/Basic.h>
#include "unit.h"

void unit_add_suite(const char *name, const struct unit_case *cases)
{
	CU_pSuite suite = CU_add_suite(name, NULL, NULL);

	if (!suite) {
		fprintf(stderr, "unit: cannot add suite %s: %s\n", name, CU_get_error_msg());
		exit(2);
	}
	for (; cases->name; cases++)
		CU_add_test(suite, cases->name, cases->fn);
}

int main(void)
{
	unsigned run, failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	unit_register();
	CU_basic_set_mode(CU_BRM_NORMAL);
	CU_basic_run_tests();
	run = CU_get_number_of_tests_run();
	failed = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	printf("unit: %u passed, %u failed\n", run - failed, failed);
	return failed ? 1 : 0;
}
